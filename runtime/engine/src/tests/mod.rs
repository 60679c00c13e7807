//! Behaviour of the engine on real threads. Every test that waits runs under a watchdog. This
//! module holds the helpers and nodes the tests share; each concept's tests are in a child module.

mod edges;
mod idle_until;
mod panics;
mod park;
mod ping_pong;
mod placement;
mod shutdown;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use super::*;
use hearth_testkit::within as watchdog;

/// Polls `condition` every millisecond until it holds; panics after `limit`.
fn wait_until(limit: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < limit, "timed out waiting until {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

fn engine(workers: usize) -> Engine {
    Engine::builder()
        .workers(workers)
        .pin(false)
        .build()
        .expect("valid engine configuration")
}

/// Reports each value it receives together with the time it saw it.
struct Stamper {
    input: EdgeRx<Instant>,
    report: mpsc::Sender<(Instant, Instant)>,
}

impl Node for Stamper {
    fn name(&self) -> &str {
        "stamper"
    }

    fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
        let mut progress = false;
        while let Ok(sent) = self.input.try_recv() {
            let _ = self.report.send((sent, Instant::now()));
            progress = true;
        }
        if progress { Poll::Busy } else { Poll::IDLE }
    }
}

/// Waits until the worker has parked and stays parked: no polls for 50 ms.
fn wait_parked(engine: &Engine, worker: usize) -> WorkerStats {
    wait_until(Duration::from_secs(5), "the worker parks", || {
        engine
            .stats(worker)
            .is_some_and(|s| s.parked && s.parks >= 1)
    });
    let before = engine.stats(worker).expect("worker exists");
    thread::sleep(Duration::from_millis(50));
    let after = engine.stats(worker).expect("worker exists");
    assert!(after.parked, "worker stayed parked");
    assert_eq!(after.polls, before.polls, "a parked worker polls nothing");
    after
}

/// Always idle, never woken: what most nodes look like on an idle daemon.
struct Sleeper;

impl Node for Sleeper {
    fn name(&self) -> &str {
        "sleeper"
    }

    fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
        Poll::IDLE
    }
}
