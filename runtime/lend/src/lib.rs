//! One thread owns a connection and lends it to another for a run of ordered writes: a
//! streaming client's tokens are written on the thread that publishes them, without waking the
//! owner first, while the owner stays the one writer of everything else.
//!
//! The protocol, between the **owner** (the socket reactor, which reads every item off the
//! event ring in order) and the **borrower** (the thread that publishes them):
//!
//! - **Lend** ([`LendTable::lend`]): only when the owner has read everything published
//!   (checked under the lock every publication holds) and has nothing of its own waiting, so
//!   every later item of the request is the borrower's to write and none before it is.
//! - **While lent** ([`LendTable::publish`]): the borrower writes each item whole, without
//!   blocking. A peer that takes only part of one (or none, or fails) ends its run: it keeps
//!   the unwritten rest, writes nothing more, and the owner is woken.
//! - **Claim** ([`LendTable::claim`]): the owner still reads every item. For each it asks who
//!   wrote it; when the borrower stopped, the writer comes back with the rest, queued before
//!   anything else. An item before the last one the borrower wrote needs no lock to answer:
//!   the borrower marks how far it wrote ([`WrittenMark`]) after each write, and a later item
//!   written means this one was written whole. Read in batches, the owner takes the lock
//!   about once per batch, for the newest.
//! - **Take back** ([`LendTable::end`], [`LendTable::forget`]): before the owner writes
//!   anything else to the connection or closes it.
//!
//! Bytes therefore reach the peer in order, from one writer at a time; `tests/loom_lend.rs`
//! checks it under every interleaving loom explores.
//!
//! ```
//! use hearth_lend::{Claim, LendTable, Wrote};
//!
//! let table: LendTable<Vec<u8>> = LendTable::new();
//! // The owner has read the one item published so far: it lends the writer from item 1 on.
//! let mark = table.lend("r", 1, || 1, || Some(Vec::new())).expect("lent");
//! // The borrower publishes items 1 and 2 and writes them whole.
//! for seq in 1..=2u64 {
//!     let wrote = table.publish(
//!         "r",
//!         |_| Some(seq),
//!         |out, line| {
//!             line.extend_from_slice(format!("item {seq}\n").as_bytes());
//!             out.extend_from_slice(line);
//!             Ok(line.len())
//!         },
//!     );
//!     assert_eq!(wrote, Wrote::Whole);
//! }
//! // Item 1 is known written without the lock, item 2 (the last) under it: the writer stays
//! // lent until the answer ends, and comes back with nothing owed.
//! assert!(mark.passed(1));
//! assert_eq!(table.claim("r", 2), Claim::WRITTEN);
//! assert_eq!(table.forget("r"), Some(Vec::new()));
//! ```

#![warn(missing_docs)]

mod mark;
mod sync;
mod table;

pub use mark::WrittenMark;
pub use table::{Claim, LendTable, Wrote};
