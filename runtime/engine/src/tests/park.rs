//! Parking and waking: an idle worker parks and stops polling, and a send, a `Wake`, a dropped
//! sender or a drained receiver wakes it with no wake-up lost.

use super::*;

#[test]
fn parked_worker_is_woken_by_a_send_from_a_foreign_thread() {
    watchdog(Duration::from_secs(10), || {
        let mut engine = engine(1);
        let (tx, input) = edge::<Instant>(4);
        let (report, reports) = mpsc::channel();
        engine
            .spawn(0, Stamper { input, report })
            .expect("worker exists");
        engine.start().expect("workers start");
        let parked = wait_parked(&engine, 0);

        let sender = thread::spawn(move || tx.try_send(Instant::now()).expect("edge has room"));
        let (sent, seen) = reports
            .recv_timeout(Duration::from_secs(5))
            .expect("the parked worker was woken");
        sender.join().expect("sender finished");
        let latency = seen.duration_since(sent);
        assert!(latency < Duration::from_secs(1), "wake-up took {latency:?}");
        let stats = engine.stats(0).expect("worker exists");
        assert!(
            stats.wakeups > parked.wakeups,
            "the send unparked the worker"
        );
        // Counters are published at the end of the pass that delivered the value.
        wait_until(
            Duration::from_secs(1),
            "the worker publishes its polls",
            || engine.stats(0).is_some_and(|s| s.polls > parked.polls),
        );
        engine.shutdown();
    });
}

/// Copies a value published by another thread, which then calls `Wake::wake`.
struct Mailbox {
    slot: Arc<AtomicU64>,
    seen: mpsc::Sender<u64>,
    last: u64,
}

impl Node for Mailbox {
    fn name(&self) -> &str {
        "mailbox"
    }

    fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
        let value = self.slot.load(Ordering::Acquire);
        if value == self.last {
            return Poll::IDLE;
        }
        self.last = value;
        let _ = self.seen.send(value);
        Poll::Busy
    }
}

#[test]
fn wake_handle_wakes_a_parked_worker_from_any_thread() {
    watchdog(Duration::from_secs(10), || {
        let mut engine = engine(2);
        let slot = Arc::new(AtomicU64::new(0));
        let (seen_tx, seen) = mpsc::channel();
        engine
            .spawn(
                1,
                Mailbox {
                    slot: Arc::clone(&slot),
                    seen: seen_tx,
                    last: 0,
                },
            )
            .expect("worker exists");
        let wake = engine.waker(1).expect("worker exists");
        assert_eq!(wake.worker(), 1);
        assert!(engine.waker(2).is_none());
        engine.start().expect("workers start");
        for round in 1..=3 {
            wait_parked(&engine, 1);
            let (slot, wake) = (Arc::clone(&slot), wake.clone());
            thread::spawn(move || {
                slot.store(round, Ordering::Release);
                wake.wake();
            })
            .join()
            .expect("waker thread finished");
            assert_eq!(seen.recv_timeout(Duration::from_secs(1)), Ok(round));
        }
        engine.shutdown();
    });
}

#[test]
fn idle_engine_parks_and_stops_polling() {
    watchdog(Duration::from_secs(10), || {
        let mut engine = engine(2);
        for worker in [0, 0, 1, 1] {
            engine.spawn(worker, Sleeper).expect("worker exists");
        }
        engine.start().expect("workers start");
        wait_until(Duration::from_secs(5), "both workers park", || {
            (0..2).all(|w| engine.stats(w).is_some_and(|s| s.parked))
        });
        let before: Vec<_> = (0..2)
            .map(|w| engine.stats(w).expect("worker exists"))
            .collect();
        thread::sleep(Duration::from_millis(200));
        for (worker, before) in before.iter().enumerate() {
            let after = engine.stats(worker).expect("worker exists");
            assert_eq!(
                after.polls, before.polls,
                "worker {worker} polled while idle"
            );
            assert_eq!(after.parks, before.parks, "worker {worker} woke while idle");
            assert!(after.parked);
        }
        engine.shutdown();
    });
}

/// Reports when its input disconnects.
struct Watcher {
    input: EdgeRx<u8>,
    gone: mpsc::Sender<()>,
}

impl Node for Watcher {
    fn name(&self) -> &str {
        "watcher"
    }

    fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
        if self.input.try_recv() == Err(TryRecvError::Disconnected) {
            let _ = self.gone.send(());
        }
        Poll::IDLE
    }
}

#[test]
fn dropping_the_last_sender_wakes_the_parked_consumer() {
    watchdog(Duration::from_secs(10), || {
        let mut engine = engine(1);
        let (tx, input) = edge::<u8>(1);
        let (gone_tx, gone) = mpsc::channel();
        engine
            .spawn(
                0,
                Watcher {
                    input,
                    gone: gone_tx,
                },
            )
            .expect("worker exists");
        engine.start().expect("workers start");
        wait_parked(&engine, 0);
        drop(tx);
        gone.recv_timeout(Duration::from_secs(2))
            .expect("consumer woken to see the disconnection");
        engine.shutdown();
    });
}

/// Pushes into a full edge until it is refused for good.
struct Pusher {
    out: EdgeTx<u8>,
    outcome: mpsc::Sender<&'static str>,
}

impl Node for Pusher {
    fn name(&self) -> &str {
        "pusher"
    }

    fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
        match self.out.try_send(7) {
            Ok(()) => Poll::Busy,
            Err(TrySendError::Full(_)) => Poll::IDLE,
            Err(TrySendError::Disconnected(_)) => {
                let _ = self.outcome.send("disconnected");
                Poll::IDLE
            }
        }
    }
}

#[test]
fn blocked_sender_node_is_woken_when_the_receiver_drains_or_drops() {
    watchdog(Duration::from_secs(10), || {
        let mut engine = engine(1);
        let (out, rx) = edge::<u8>(2);
        let (outcome_tx, outcome) = mpsc::channel();
        engine
            .spawn(
                0,
                Pusher {
                    out,
                    outcome: outcome_tx,
                },
            )
            .expect("worker exists");
        engine.start().expect("workers start");
        for _ in 0..3 {
            let parked = wait_parked(&engine, 0);
            assert!(rx.len() == 2, "pusher filled the edge");
            // A receive on this (non-worker) thread makes room and wakes the pusher, which refills.
            assert_eq!(rx.recv_timeout(Duration::from_secs(1)), Ok(7));
            wait_until(
                Duration::from_secs(2),
                "the pusher refills the edge",
                || rx.len() == 2,
            );
            assert!(engine.stats(0).expect("worker exists").wakeups > parked.wakeups);
        }
        wait_parked(&engine, 0);
        drop(rx);
        assert_eq!(
            outcome.recv_timeout(Duration::from_secs(2)),
            Ok("disconnected")
        );
        engine.shutdown();
    });
}
