//! Hearth's thread-per-core engine: pinned workers that each own a fixed set of [`Node`]s and poll
//! them round-robin, bounded [`edge`]s between nodes, and [`Wake`] handles for everything else.
//! Beside the engine it holds the few primitives every layer above shares: [`CancelToken`] and
//! its [`Deadline`], the wall clock ([`now_ms`]), the text of a caught panic
//! ([`panic_message`]) and the typed result [`Sink`] service threads report through.
//!
//! It is a leaf: it knows nothing of turns, providers, memory or the event ring; those crates
//! build on it.
//!
//! - **Ownership.** A node is placed on one worker and never migrates; nodes share nothing and talk
//!   only through edges. A node never blocks: blocking work runs on a service thread owned by the
//!   node, which reports back through an edge (or sets state and calls [`Wake::wake`]).
//! - **Idle means idle.** A worker whose pass makes no progress spins for a few tens of
//!   microseconds, then parks until an edge send, a [`Wake`], or the earliest `Idle { until }`
//!   deadline of its nodes. Waking an awake worker costs a fence and a load, never a syscall.
//! - **Panic boundary.** Every `poll` runs under `catch_unwind`. A panic is reported to the
//!   `on_node_panic` callback, the node's `restart` is called, and polling goes on; a node that
//!   keeps panicking is polled with a growing delay (10 ms doubling to 1 s) so it cannot spin a core.
//!   The worker thread never dies.
//! - **Edges bind lazily.** An [`EdgeRx`] learns which worker to wake the first time a worker reads
//!   it, so wiring needs no registration step and cannot forget one.
//!
//! # How `graph::build` uses it
//!
//! Build an engine, create every edge, construct each node holding its `EdgeRx` inputs and `EdgeTx`
//! outputs (a `EdgeTx` may be cloned for several producers and for non-worker threads), place each
//! node on a worker, start:
//!
//! ```
//! use std::time::Duration;
//! use hearth_engine::{Engine, EdgeRx, EdgeTx, Node, NodeCx, Poll, edge};
//!
//! /// Doubles every number it receives.
//! struct Doubler { input: EdgeRx<u64>, output: EdgeTx<u64>, pending: Option<u64> }
//!
//! impl Node for Doubler {
//!     fn name(&self) -> &str { "doubler" }
//!     fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
//!         let mut progress = false;
//!         loop {
//!             let value = match self.pending.take() {
//!                 Some(value) => value,
//!                 None => match self.input.try_recv() { Ok(n) => n * 2, Err(_) => break },
//!             };
//!             if let Err(full) = self.output.try_send(value) {
//!                 self.pending = Some(full.into_inner()); // keep it; we are woken when there is room
//!                 break;
//!             }
//!             progress = true;
//!         }
//!         if progress { Poll::Busy } else { Poll::IDLE }
//!     }
//! }
//!
//! let mut engine = Engine::builder().workers(2).build()?;
//! let (to_doubler, input) = edge::<u64>(64);
//! let (output, from_doubler) = edge::<u64>(64);
//! engine.spawn(1, Doubler { input, output, pending: None })?;
//! engine.start()?;
//!
//! // A thread outside the engine (a socket handler, say) feeds and reads the graph.
//! to_doubler.send_timeout(21, Duration::from_secs(5)).expect("doubler is running");
//! assert_eq!(from_doubler.recv_timeout(Duration::from_secs(5)), Ok(42));
//!
//! let report = engine.shutdown();
//! assert_eq!(report.nodes().collect::<Vec<_>>(), ["doubler"]);
//! # Ok::<(), hearth_engine::EngineError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod cancel;
mod clock;
mod edge;
mod error;
mod node;
mod panic;
mod pin;
mod report;
mod runtime;
mod sink;
mod stats;
mod sync;
mod waker;
mod worker;

#[cfg(all(test, loom))]
mod loom_park;
#[cfg(all(test, not(loom)))]
mod tests;

pub use cancel::{CancelToken, Deadline};
pub use clock::{LocalZone, days_from_civil, duration_ms, now_ms};
pub use edge::{
    EdgeRx, EdgeTx, RecvTimeoutError, SendTimeoutError, TryRecvError, TrySendError, edge,
};
pub use error::EngineError;
pub use node::{Node, NodeCx, NodeId, Poll};
pub use panic::panic_message;
pub use report::{ShutdownReport, WorkerReport};
pub use runtime::{DEFAULT_SPIN, Engine, EngineBuilder};
pub use sink::Sink;
pub use stats::WorkerStats;
pub use waker::Wake;
