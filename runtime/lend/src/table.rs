//! The table of lent writers, by request id, and the four moves on it: lend, write, claim,
//! take back.

use std::collections::HashMap;
use std::io;

use crate::mark::WrittenMark;
use crate::sync::{AtomicUsize, Mutex, MutexGuard, Ordering};

/// The writers the owner lent to the borrower, by request id.
pub struct LendTable<S> {
    lent: Mutex<HashMap<String, Lent<S>>>,
    /// How many requests `lent` holds, stored under its lock whenever it changes. Only the
    /// owner adds or removes entries (the borrower changes them in place), so on the owner's
    /// thread this count is exact: with none, a write's writer is known without the lock.
    entries: AtomicUsize,
}

impl<S> std::fmt::Debug for LendTable<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LendTable")
            .field("entries", &self.entries.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// One request's writer, lent to the borrower, and what it wrote.
struct Lent<S> {
    /// The writer; `None` once the owner took it back while writes the borrower made are
    /// still unclaimed.
    stream: Option<S>,
    /// How far the borrower wrote, shared with the owner for claims without the lock.
    mark: WrittenMark,
    /// The borrower stopped: the part of its last write the peer did not take.
    rest: Option<Vec<u8>>,
    /// The bytes being written; reused from write to write.
    line: Vec<u8>,
}

impl<S> Lent<S> {
    /// Whether the borrower makes this request's next write.
    fn writing(&self) -> bool {
        self.stream.is_some() && self.rest.is_none()
    }

    /// The bytes to queue before anything else when the writer comes back; `None` when it
    /// came back earlier.
    fn into_rest(self) -> Option<Vec<u8>> {
        self.stream.map(|_| self.rest.unwrap_or_default())
    }
}

/// Who writes an item the owner read, as [`LendTable::claim`] answers.
#[derive(Debug, PartialEq, Eq)]
pub struct Claim {
    /// The borrower wrote it (or its first part): the owner does not.
    pub written: bool,
    /// The writer came back: queue these bytes before anything else.
    pub rest: Option<Vec<u8>>,
}

impl Claim {
    /// Written by the borrower, nothing comes back: what [`WrittenMark::passed`] tells
    /// without the lock.
    pub const WRITTEN: Claim = Claim {
        written: true,
        rest: None,
    };
}

/// What the borrower did with one item ([`LendTable::publish`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrote {
    /// Not the borrower's to write (not lent, stopped, or not published).
    No,
    /// Written whole.
    Whole,
    /// Begun: the peer took part of it (maybe none). The borrower stopped; the owner must be
    /// woken to take the writer back with the rest.
    Short,
    /// The write failed: the borrower stopped and hands it back unwritten, and the owner,
    /// woken, writes it and meets the error itself.
    Failed,
}

impl<S> Default for LendTable<S> {
    fn default() -> Self {
        Self {
            lent: Mutex::default(),
            entries: AtomicUsize::new(0),
        }
    }
}

impl<S> LendTable<S> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the borrower makes the writes of `request_id` (lent, and not stopped).
    pub fn is_writing(&self, request_id: &str) -> bool {
        self.table()
            .is_some_and(|lent| lent.get(request_id).is_some_and(Lent::writing))
    }

    /// Lends the writer `stream` makes to the borrower for the items of `request_id`
    /// published from now on, when the owner has read everything published
    /// (`position == published()`, checked under the lock every publication holds): how far
    /// the borrower writes, for claims without the lock. `None` when it has not, when the
    /// request is lent already, or when `stream` makes none: the owner goes on writing.
    pub fn lend(
        &self,
        request_id: &str,
        position: u64,
        published: impl Fn() -> u64,
        stream: impl FnOnce() -> Option<S>,
    ) -> Option<WrittenMark> {
        let mut lent = self.lent.lock();
        if lent.contains_key(request_id) || published() != position {
            return None;
        }
        let mark = WrittenMark::default();
        lent.insert(
            request_id.to_owned(),
            Lent {
                stream: Some(stream()?),
                mark: mark.clone(),
                rest: None,
                line: Vec::new(),
            },
        );
        self.count(&lent);
        Some(mark)
    }

    /// The borrower's side: publishes one item of `request_id` with `publish` (told whether
    /// the borrower writes it; its sequence number, or `None` when it was not published) and,
    /// when the borrower writes it, writes it with `write` (handed the writer and an empty
    /// buffer to fill with the item's bytes; how many the peer took). Both run under the
    /// table's lock, so the owner never reads an item before its write is done.
    pub fn publish(
        &self,
        request_id: &str,
        publish: impl FnOnce(bool) -> Option<u64>,
        write: impl FnOnce(&mut S, &mut Vec<u8>) -> io::Result<usize>,
    ) -> Wrote {
        let mut lent = self.lent.lock();
        let writing = lent.get(request_id).is_some_and(Lent::writing);
        let Some(seq) = publish(writing) else {
            return Wrote::No;
        };
        let Some(entry) = lent.get_mut(request_id).filter(|_| writing) else {
            return Wrote::No;
        };
        let Some(stream) = entry.stream.as_mut() else {
            return Wrote::No;
        };
        entry.line.clear();
        match write(stream, &mut entry.line) {
            Ok(sent) if sent >= entry.line.len() => {
                entry.mark.set(seq);
                Wrote::Whole
            }
            // The item is the borrower's from here on, even unwritten: the owner sends the
            // rest it hands back.
            Ok(sent) => {
                entry.mark.set(seq);
                entry.rest = Some(entry.line[sent..].to_vec());
                Wrote::Short
            }
            Err(_) => {
                entry.rest = Some(Vec::new());
                Wrote::Failed
            }
        }
    }

    /// Who writes the item `seq` of `request_id` (see [`Claim`]). The owner claims a
    /// request's items in order, possibly long after the borrower wrote them: an item up to
    /// the last one the borrower wrote is the borrower's, and the writer comes back (with the
    /// rest of a half-written item) when the owner reaches that last one, or passes it.
    pub fn claim(&self, request_id: &str, seq: u64) -> Claim {
        let theirs_alone = Claim {
            written: false,
            rest: None,
        };
        let Some(mut lent) = self.table() else {
            return theirs_alone;
        };
        let Some(entry) = lent.get(request_id) else {
            return theirs_alone;
        };
        let through = entry.mark.through();
        let written = through.is_some_and(|t| seq <= t);
        let last = through.is_none_or(|t| seq >= t);
        if !last || (written && entry.writing()) {
            return Claim {
                written,
                rest: None,
            };
        }
        // Nothing after this item is the borrower's (or, defensively, it never saw this one).
        let entry = lent.remove(request_id).expect("looked up above");
        self.count(&lent);
        Claim {
            written,
            rest: entry.into_rest(),
        }
    }

    /// [`LendTable::claim`], answered without the lock when `mark` (what [`LendTable::lend`]
    /// returned for the request, kept by the owner while it is lent) shows the borrower wrote
    /// past `seq`.
    pub fn claim_by(&self, mark: Option<&WrittenMark>, request_id: &str, seq: u64) -> Claim {
        if mark.is_some_and(|m| m.passed(seq)) {
            return Claim::WRITTEN;
        }
        self.claim(request_id, seq)
    }

    /// Takes the writer of `request_id` back, if it is lent: the bytes to queue first. What
    /// the borrower wrote stays known until the owner has claimed it (see
    /// [`LendTable::claim`]).
    pub fn end(&self, request_id: &str) -> Option<Vec<u8>> {
        let mut lent = self.table()?;
        let entry = lent.get_mut(request_id)?;
        let rest = entry
            .stream
            .take()
            .map(|_| entry.rest.take().unwrap_or_default());
        if entry.mark.through().is_none() {
            lent.remove(request_id);
            self.count(&lent);
        }
        rest
    }

    /// [`LendTable::end`], and forgets the request: for a request whose items have all been
    /// claimed, or whose peer is gone.
    pub fn forget(&self, request_id: &str) -> Option<Vec<u8>> {
        let mut lent = self.table()?;
        let entry = lent.remove(request_id)?;
        self.count(&lent);
        entry.into_rest()
    }

    /// Whether any request is in the table (exact on the owner's thread, see `entries`).
    fn any_lent(&self) -> bool {
        self.entries.load(Ordering::Relaxed) > 0
    }

    /// The table, locked, for the owner's reads and removals; `None` without the lock when
    /// it holds no request.
    fn table(&self) -> Option<MutexGuard<'_, HashMap<String, Lent<S>>>> {
        self.any_lent().then(|| self.lent.lock())
    }

    /// Stores the table's size; called under its lock after every insert or removal.
    fn count(&self, lent: &HashMap<String, Lent<S>>) {
        self.entries.store(lent.len(), Ordering::Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
#[path = "table_tests.rs"]
mod tests;
