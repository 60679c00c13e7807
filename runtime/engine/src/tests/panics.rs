//! A panicking node is reported and restarted while its neighbours keep running, and one that
//! panics on every poll is backed off.

use super::*;

/// Handles commands; panics on "boom".
struct Flaky {
    input: EdgeRx<&'static str>,
    handled: mpsc::Sender<&'static str>,
    restarts: Arc<AtomicU32>,
}

impl Node for Flaky {
    fn name(&self) -> &str {
        "flaky"
    }

    fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
        let mut progress = false;
        while let Ok(command) = self.input.try_recv() {
            assert_ne!(command, "boom", "boom requested");
            let _ = self.handled.send(command);
            progress = true;
        }
        if progress { Poll::Busy } else { Poll::IDLE }
    }

    fn restart(&mut self, panic_message: &str) {
        assert!(panic_message.contains("boom requested"));
        self.restarts.fetch_add(1, Ordering::SeqCst);
    }
}

/// Counts its polls, asking to be polled again every millisecond.
struct Ticker {
    ticks: Arc<AtomicU64>,
}

impl Node for Ticker {
    fn name(&self) -> &str {
        "ticker"
    }

    fn poll(&mut self, cx: &mut NodeCx<'_>) -> Poll {
        self.ticks.fetch_add(1, Ordering::Relaxed);
        Poll::idle_until(cx.now() + Duration::from_millis(1))
    }
}

type PanicLog = Arc<Mutex<Vec<(String, String)>>>;

fn engine_recording_panics(workers: usize) -> (Engine, PanicLog) {
    let log = PanicLog::default();
    let sink = Arc::clone(&log);
    let engine = Engine::builder()
        .workers(workers)
        .pin(false)
        .on_node_panic(move |node, message| {
            sink.lock()
                .expect("log lock")
                .push((node.to_owned(), message.to_owned()));
        })
        .build()
        .expect("valid engine configuration");
    (engine, log)
}

#[test]
fn panicking_node_is_reported_restarted_and_its_neighbours_keep_running() {
    watchdog(Duration::from_secs(10), || {
        let (mut engine, log) = engine_recording_panics(1);
        let (commands, input) = edge(8);
        let (handled_tx, handled) = mpsc::channel();
        let restarts = Arc::new(AtomicU32::new(0));
        let ticks = Arc::new(AtomicU64::new(0));
        engine
            .spawn(
                0,
                Flaky {
                    input,
                    handled: handled_tx,
                    restarts: Arc::clone(&restarts),
                },
            )
            .expect("worker exists");
        engine
            .spawn(
                0,
                Ticker {
                    ticks: Arc::clone(&ticks),
                },
            )
            .expect("worker exists");
        engine.start().expect("workers start");

        commands.try_send("a").expect("room");
        assert_eq!(handled.recv_timeout(Duration::from_secs(2)), Ok("a"));
        commands.try_send("boom").expect("room");
        commands.try_send("b").expect("room");
        assert_eq!(
            handled.recv_timeout(Duration::from_secs(2)),
            Ok("b"),
            "polling resumed after the restart"
        );

        assert_eq!(restarts.load(Ordering::SeqCst), 1);
        let reported = log.lock().expect("log lock").clone();
        assert_eq!(reported.len(), 1);
        assert_eq!(reported[0].0, "flaky");
        assert!(
            reported[0].1.contains("boom requested"),
            "message: {}",
            reported[0].1
        );

        let before = ticks.load(Ordering::Relaxed);
        wait_until(Duration::from_secs(2), "the ticker keeps ticking", || {
            ticks.load(Ordering::Relaxed) >= before + 10
        });
        let stats = engine.stats(0).expect("worker exists");
        assert_eq!((stats.panics, stats.restarts), (1, 1));
        engine.shutdown();
    });
}

/// Panics on every poll.
struct Crashy {
    polls: Arc<AtomicU64>,
}

impl Node for Crashy {
    fn name(&self) -> &str {
        "crashy"
    }

    fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
        self.polls.fetch_add(1, Ordering::SeqCst);
        panic!("always broken");
    }
}

#[test]
fn node_panicking_in_a_loop_is_backed_off() {
    watchdog(Duration::from_secs(10), || {
        let (mut engine, log) = engine_recording_panics(1);
        let crashes = Arc::new(AtomicU64::new(0));
        let ticks = Arc::new(AtomicU64::new(0));
        engine
            .spawn(
                0,
                Crashy {
                    polls: Arc::clone(&crashes),
                },
            )
            .expect("worker exists");
        engine
            .spawn(
                0,
                Ticker {
                    ticks: Arc::clone(&ticks),
                },
            )
            .expect("worker exists");
        engine.start().expect("workers start");
        wait_until(Duration::from_secs(5), "crashy panics three times", || {
            crashes.load(Ordering::SeqCst) >= 3
        });
        let ticks_before = ticks.load(Ordering::Relaxed);
        let before = crashes.load(Ordering::SeqCst);
        thread::sleep(Duration::from_millis(400));

        // After three immediate retries the waits are 10, 20, 40, 80, 160 ms: about 5 polls in the
        // next 400 ms, where an unbounded retry would poll thousands of times. It is still retried.
        let crashed = crashes.load(Ordering::SeqCst) - before;
        assert!(
            (2..=12).contains(&crashed),
            "crashy was polled {crashed} times in 400 ms of back-off"
        );
        assert!(
            ticks.load(Ordering::Relaxed) >= ticks_before + 20,
            "the neighbour starved"
        );
        let report = engine.shutdown();
        let reported = log.lock().expect("log lock").clone();
        // The final pass at shutdown polls crashy once more.
        assert_eq!(reported.len() as u64, crashes.load(Ordering::SeqCst));
        assert!(
            reported
                .iter()
                .all(|(node, message)| node == "crashy" && message == "always broken")
        );
        assert_eq!(report.workers[0].stats.panics, reported.len() as u64);
    });
}
