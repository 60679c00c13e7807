//! Model check of the park/wake handshake with loom: every interleaving (up to a preemption
//! bound) of a worker that parks
//! through [`WorkerSignal::park_unless`] and senders that publish work and then wake it, the
//! one way [`Wake::wake`](crate::Wake) does (`notify`: fence, load) and the other way an edge
//! send does (its own fence, then `wake_if_sleeping`). The published work is a relaxed counter,
//! weaker than any real edge, so only the two fences order it. A lost wake-up leaves the worker
//! parked forever, which loom reports as a deadlock.
//!
//! Loom's modification order is a partial order built from causality, not the total order per
//! atomic of the C11 model: a plain store of `sleeping` by the worker and a sender's concurrent
//! swap could stay unordered, and a sender's load after its SeqCst fence could then return the
//! older swap's `false` although the fence-fence rule makes it see the worker's later `true`.
//! At three preemptions loom reported exactly that trace as a deadlock (no real execution has
//! it). The worker's writes to `sleeping` are swaps for that reason, so every write is a
//! read-modify-write and the writes form one chain for loom too; removing either SeqCst fence
//! still makes both models fail.
//!
//! Run: `LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" cargo test -p hearth-engine --release --lib
//! loom_park` (`make loom`; it also passes at 4, in about 25 s).

use std::sync::Arc;

use loom::sync::atomic::{AtomicUsize, Ordering, fence};
use loom::thread;

use crate::sync::Parker;
use crate::waker::WorkerSignal;

/// What the worker owns: the parker it sleeps on and how much work it has taken.
struct ModelWorker {
    parker: Parker,
    work: Arc<AtomicUsize>,
    taken: usize,
    parks: usize,
}

impl ModelWorker {
    /// One poll of its node: takes whatever was published since the last one.
    fn poll(&mut self) -> bool {
        let published = self.work.load(Ordering::Relaxed);
        let fresh = published > self.taken;
        self.taken = published;
        fresh
    }

    /// The worker loop of `Worker::run` with no spinning: poll, and when a poll found nothing,
    /// park through the real handshake, until `expected` units of work were taken.
    fn run(&mut self, signal: &WorkerSignal, expected: usize) {
        while self.taken < expected {
            if self.poll() {
                continue;
            }
            signal.park_unless(
                self,
                |w| (!w.poll()).then_some(()),
                |w, ()| {
                    w.parks += 1;
                    w.parker.park();
                },
            );
        }
    }
}

/// Explores every interleaving with at most `preemptions` forced context switches (bounded
/// exhaustive search, as loom recommends; `LOOM_MAX_PREEMPTIONS` overrides it).
fn model(senders: usize, edge_style: bool, preemptions: usize) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemptions);
    }
    builder.check(move || {
        let parker = Parker::new();
        let signal = Arc::new(WorkerSignal::new(0, parker.unparker().clone()));
        let work = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..senders)
            .map(|i| {
                let signal = Arc::clone(&signal);
                let work = Arc::clone(&work);
                thread::spawn(move || {
                    work.fetch_add(1, Ordering::Relaxed);
                    if edge_style && i == 0 {
                        fence(Ordering::SeqCst);
                        signal.wake_if_sleeping();
                    } else {
                        signal.notify();
                    }
                })
            })
            .collect();
        let mut worker = ModelWorker {
            parker,
            work,
            taken: 0,
            parks: 0,
        };
        worker.run(&signal, senders);
        for handle in handles {
            handle.join().expect("sender");
        }
        assert_eq!(worker.taken, senders);
        assert!(!signal.is_sleeping(), "a woken worker is marked awake");
        // Every park returned on a token, and tokens do not add up; each sender unparks at most once.
        let wakeups = signal.wakeups();
        assert!(
            worker.parks as u64 <= wakeups && wakeups <= senders as u64,
            "parks {} wakeups {wakeups}",
            worker.parks
        );
    });
}

/// One sender through `Wake::wake`: the worker never sleeps through the published work.
#[test]
fn a_wake_is_never_lost() {
    model(1, false, 3);
}

/// Two concurrent senders, one through an edge's fence and `wake_if_sleeping`, one through
/// `notify`: both units are taken and the worker ends awake.
#[test]
fn two_senders_never_lose_a_wake() {
    model(2, true, 3);
}
