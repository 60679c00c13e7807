//! Behaviour of the engine on real threads. Every test that waits runs under a watchdog.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use proptest::prelude::*;

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

/// Sends `0..total` with at most `window` unanswered, and checks the answers come back in order.
struct Pinger {
    out: EdgeTx<u64>,
    back: EdgeRx<u64>,
    window: u64,
    total: u64,
    next_send: u64,
    next_expect: u64,
    done: Option<mpsc::Sender<Result<u64, String>>>,
}

impl Node for Pinger {
    fn name(&self) -> &str {
        "pinger"
    }

    fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
        let mut progress = false;
        while let Ok(answer) = self.back.try_recv() {
            if answer != self.next_expect {
                if let Some(done) = self.done.take() {
                    let _ = done.send(Err(format!("expected {}, got {answer}", self.next_expect)));
                }
                return Poll::IDLE;
            }
            self.next_expect += 1;
            progress = true;
        }
        while self.next_send < self.total && self.next_send - self.next_expect < self.window {
            match self.out.try_send(self.next_send) {
                Ok(()) => {
                    self.next_send += 1;
                    progress = true;
                }
                Err(error) => {
                    assert!(error.is_full(), "ponger vanished");
                    assert_eq!(
                        error.into_inner(),
                        self.next_send,
                        "full edge hands the value back"
                    );
                    break;
                }
            }
        }
        if self.next_expect == self.total
            && let Some(done) = self.done.take()
        {
            let _ = done.send(Ok(self.next_expect));
        }
        if progress { Poll::Busy } else { Poll::IDLE }
    }
}

/// Echoes every value, holding one back while its output is full.
struct Ponger {
    input: EdgeRx<u64>,
    back: EdgeTx<u64>,
    pending: Option<u64>,
}

impl Node for Ponger {
    fn name(&self) -> &str {
        "ponger"
    }

    fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
        let mut progress = false;
        while let Some(value) = self.pending.take().or_else(|| self.input.try_recv().ok()) {
            if let Err(full) = self.back.try_send(value) {
                self.pending = Some(full.into_inner());
                break;
            }
            progress = true;
        }
        if progress { Poll::Busy } else { Poll::IDLE }
    }
}

/// Runs a ping-pong on a fresh engine and returns the number of answers checked.
fn ping_pong(
    total: u64,
    window: u64,
    capacity_out: usize,
    capacity_back: usize,
    workers: (usize, usize),
    pin: bool,
    spin: Duration,
) -> Result<u64, String> {
    let mut engine = Engine::builder()
        .workers(2)
        .pin(pin)
        .spin(spin)
        .build()
        .expect("valid engine configuration");
    let (out, input) = edge(capacity_out);
    let (back_tx, back) = edge(capacity_back);
    let (done_tx, done_rx) = mpsc::channel();
    engine
        .spawn(
            workers.0,
            Pinger {
                out,
                back,
                window,
                total,
                next_send: 0,
                next_expect: 0,
                done: Some(done_tx),
            },
        )
        .expect("worker exists");
    engine
        .spawn(
            workers.1,
            Ponger {
                input,
                back: back_tx,
                pending: None,
            },
        )
        .expect("worker exists");
    engine.start().expect("workers start");
    let result = done_rx
        .recv_timeout(Duration::from_secs(20))
        .map_err(|_| "ping-pong stalled".to_owned())?;
    let report = engine.shutdown();
    assert!(report.all_joined());
    result
}

#[test]
fn ping_pong_100k_in_order_across_two_pinned_workers() {
    let answered = watchdog(Duration::from_secs(25), || {
        ping_pong(100_000, 1, 1, 1, (0, 1), true, DEFAULT_SPIN)
    });
    assert_eq!(answered, Ok(100_000));
}

#[test]
fn pipelined_ping_pong_through_tiny_edges_survives_backpressure() {
    // A window larger than both capacities keeps both edges full: each side must be woken when the
    // other makes room, or the exchange stalls.
    let answered = watchdog(Duration::from_secs(25), || {
        ping_pong(20_000, 64, 2, 3, (0, 1), false, DEFAULT_SPIN)
    });
    assert_eq!(answered, Ok(20_000));
}

#[test]
fn ping_pong_that_parks_on_every_idle_moment_loses_no_wake_up() {
    let answered = watchdog(Duration::from_secs(25), || {
        ping_pong(20_000, 1, 1, 1, (0, 1), false, Duration::ZERO)
    });
    assert_eq!(answered, Ok(20_000));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn ping_pong_with_random_capacities_delivers_everything_in_order(
        capacity_out in 1usize..6,
        capacity_back in 1usize..6,
        window in 1u64..12,
        total in 1u64..2_000,
        same_worker in any::<bool>(),
        park_at_once in any::<bool>(),
    ) {
        let workers = if same_worker { (1, 1) } else { (0, 1) };
        // Without spinning every idle moment parks, which is where a lost wake-up would show.
        let spin = if park_at_once { Duration::ZERO } else { DEFAULT_SPIN };
        let answered = watchdog(Duration::from_secs(25), move || {
            ping_pong(total, window, capacity_out, capacity_back, workers, false, spin)
        });
        prop_assert_eq!(answered, Ok(total));
    }
}

/// Collects every value, but only once its input edge has been full and a producer was refused.
struct Collector {
    input: EdgeRx<u64>,
    refusals: Arc<AtomicU64>,
    gate_open: bool,
    seen: Vec<u64>,
    expected: usize,
    done: Option<mpsc::Sender<Vec<u64>>>,
}

impl Node for Collector {
    fn name(&self) -> &str {
        "collector"
    }

    fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
        if !self.gate_open {
            if self.input.len() < self.input.capacity()
                || self.refusals.load(Ordering::Relaxed) == 0
            {
                return Poll::IDLE;
            }
            self.gate_open = true;
        }
        let before = self.seen.len();
        while let Ok(value) = self.input.try_recv() {
            self.seen.push(value);
        }
        if self.seen.len() == self.expected
            && let Some(done) = self.done.take()
        {
            let _ = done.send(std::mem::take(&mut self.seen));
        }
        if self.seen.len() > before {
            Poll::Busy
        } else {
            Poll::IDLE
        }
    }
}

#[test]
fn eight_producer_threads_deliver_every_message_exactly_once() {
    const PRODUCERS: u64 = 8;
    const PER_PRODUCER: u64 = 4_000;
    watchdog(Duration::from_secs(25), || {
        let mut engine = engine(1);
        let (tx, input) = edge::<u64>(32);
        let refusals = Arc::new(AtomicU64::new(0));
        let (done_tx, done_rx) = mpsc::channel();
        engine
            .spawn(
                0,
                Collector {
                    input,
                    refusals: Arc::clone(&refusals),
                    gate_open: false,
                    seen: Vec::new(),
                    expected: (PRODUCERS * PER_PRODUCER) as usize,
                    done: Some(done_tx),
                },
            )
            .expect("worker exists");
        engine.start().expect("workers start");
        let wake = engine.waker(0).expect("worker exists");

        let producers: Vec<_> = (0..PRODUCERS)
            .map(|producer| {
                let tx = tx.clone();
                let refusals = Arc::clone(&refusals);
                let wake = wake.clone();
                thread::spawn(move || {
                    for seq in 0..PER_PRODUCER {
                        let mut value = (producer << 32) | seq;
                        if producer % 2 == 0 {
                            tx.send_timeout(value, Duration::from_secs(10))
                                .expect("collector drains within 10 s");
                            continue;
                        }
                        loop {
                            match tx.try_send(value) {
                                Ok(()) => break,
                                Err(TrySendError::Full(back)) => {
                                    assert_eq!(back, value, "full edge hands the same value back");
                                    value = back;
                                    refusals.fetch_add(1, Ordering::Relaxed);
                                    // The collector waits to see a refusal; a send cannot wake it
                                    // while the edge is full, so say so.
                                    wake.wake();
                                    thread::yield_now();
                                }
                                Err(TrySendError::Disconnected(_)) => panic!("collector vanished"),
                            }
                        }
                    }
                })
            })
            .collect();
        drop(tx);
        for producer in producers {
            producer.join().expect("producer finished");
        }
        let mut seen = done_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("collector saw every message");
        assert!(
            refusals.load(Ordering::Relaxed) > 0,
            "the edge was never full"
        );

        // Per producer, values arrive in the order they were sent.
        for producer in 0..PRODUCERS {
            let mine: Vec<u64> = seen
                .iter()
                .filter(|v| *v >> 32 == producer)
                .map(|v| v & 0xffff_ffff)
                .collect();
            assert_eq!(
                mine,
                (0..PER_PRODUCER).collect::<Vec<_>>(),
                "producer {producer}"
            );
        }
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len() as u64, PRODUCERS * PER_PRODUCER, "no duplicates");
        engine.shutdown();
    });
}

#[test]
fn full_and_disconnected_edges_hand_the_value_back() {
    let (tx, rx) = edge::<String>(2);
    tx.try_send("a".into()).expect("room for 2");
    tx.try_send("b".into()).expect("room for 2");
    assert!(tx.is_full());
    match tx.try_send("c".into()) {
        Err(TrySendError::Full(back)) => assert_eq!(back, "c"),
        other => panic!("expected Full, got {other:?}"),
    }
    match tx.send_timeout("d".into(), Duration::from_millis(5)) {
        Err(SendTimeoutError::Timeout(back)) => assert_eq!(back, "d"),
        other => panic!("expected Timeout, got {other:?}"),
    }
    assert_eq!(rx.len(), 2);
    assert_eq!(rx.try_recv().as_deref(), Ok("a"));
    drop(rx);
    match tx.try_send("e".into()) {
        Err(TrySendError::Disconnected(back)) => assert_eq!(back, "e"),
        other => panic!("expected Disconnected, got {other:?}"),
    }
    let (tx, rx) = edge::<u8>(1);
    drop(tx);
    assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    assert_eq!(
        rx.recv_timeout(Duration::from_millis(1)),
        Err(RecvTimeoutError::Disconnected)
    );
}

#[test]
#[should_panic(expected = "capacity of at least 1")]
fn zero_capacity_edge_is_refused() {
    let _ = edge::<u8>(0);
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

/// Fires once when its deadline, set on the first poll, has passed.
struct Timer {
    delay: Duration,
    deadline: Option<Instant>,
    fired: mpsc::Sender<(Duration, Instant, Instant)>,
    done: bool,
}

impl Node for Timer {
    fn name(&self) -> &str {
        "timer"
    }

    fn poll(&mut self, cx: &mut NodeCx<'_>) -> Poll {
        if self.done {
            return Poll::IDLE;
        }
        let deadline = *self.deadline.get_or_insert(cx.now() + self.delay);
        if cx.now() < deadline {
            return Poll::idle_until(deadline);
        }
        self.done = true;
        let _ = self.fired.send((self.delay, deadline, Instant::now()));
        Poll::Busy
    }
}

#[test]
fn idle_until_deadlines_fire_in_order_while_the_worker_parks() {
    watchdog(Duration::from_secs(10), || {
        let mut engine = engine(1);
        let (fired_tx, fired) = mpsc::channel();
        for millis in [90, 30, 60] {
            engine
                .spawn(
                    0,
                    Timer {
                        delay: Duration::from_millis(millis),
                        deadline: None,
                        fired: fired_tx.clone(),
                        done: false,
                    },
                )
                .expect("worker exists");
        }
        engine.start().expect("workers start");
        let mut order = Vec::new();
        for _ in 0..3 {
            let (delay, deadline, at) = fired
                .recv_timeout(Duration::from_secs(3))
                .expect("every timer fires");
            assert!(at >= deadline, "fired early");
            let late = at - deadline;
            assert!(late < Duration::from_millis(500), "fired {late:?} late");
            order.push(delay.as_millis());
        }
        assert_eq!(order, [30, 60, 90]);
        let stats = engine.stats(0).expect("worker exists");
        assert!(
            stats.parks >= 3,
            "the worker slept between deadlines: {stats:?}"
        );
        // Busy-polling for 90 ms would be hundreds of thousands of polls.
        assert!(stats.polls < 20_000, "{stats:?}");
        engine.shutdown();
    });
}

/// Records its final poll and its shutdown; optionally holds a value it flushes only then.
struct Recorder {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
    flush: Option<(EdgeTx<&'static str>, &'static str)>,
    saw_final: bool,
}

impl Node for Recorder {
    fn name(&self) -> &str {
        self.name
    }

    fn poll(&mut self, cx: &mut NodeCx<'_>) -> Poll {
        if cx.is_shutting_down() && !self.saw_final {
            self.saw_final = true;
            self.log
                .lock()
                .expect("log lock")
                .push(format!("final {}", self.name));
            if let Some((out, value)) = &self.flush {
                out.try_send(value).expect("room for the flush");
            }
        }
        Poll::IDLE
    }

    fn shutdown(&mut self) {
        self.log
            .lock()
            .expect("log lock")
            .push(format!("shutdown {}", self.name));
    }
}

fn recorder(name: &'static str, log: &Arc<Mutex<Vec<String>>>) -> Recorder {
    Recorder {
        name,
        log: Arc::clone(log),
        flush: None,
        saw_final: false,
    }
}

fn assert_final_then_shutdown(log: &[String], names: &[&str]) {
    for name in names {
        let final_at = log.iter().position(|l| *l == format!("final {name}"));
        let shutdown_at = log.iter().position(|l| *l == format!("shutdown {name}"));
        match (final_at, shutdown_at) {
            (Some(f), Some(s)) => assert!(f < s, "{name}: shutdown before final poll in {log:?}"),
            _ => panic!("{name}: missing final poll or shutdown in {log:?}"),
        }
    }
}

#[test]
fn shutdown_runs_a_final_pass_then_node_shutdown_and_joins() {
    watchdog(Duration::from_secs(10), || {
        let mut engine = engine(2);
        let log = Arc::new(Mutex::new(Vec::new()));
        let (flush_tx, flushed) = edge(1);
        engine.spawn(0, recorder("a", &log)).expect("worker exists");
        engine.spawn(0, recorder("b", &log)).expect("worker exists");
        engine.spawn(1, recorder("c", &log)).expect("worker exists");
        let mut flusher = recorder("flusher", &log);
        flusher.flush = Some((flush_tx, "buffered"));
        engine.spawn(1, flusher).expect("worker exists");
        engine.start().expect("workers start");
        wait_until(
            Duration::from_secs(5),
            "both workers adopt their nodes",
            || {
                (0..2).all(|w| {
                    engine
                        .stats(w)
                        .is_some_and(|s| s.nodes == 2 && s.passes > 0)
                })
            },
        );
        assert!(
            log.lock().expect("log lock").is_empty(),
            "nothing shut down early"
        );

        let report = engine.shutdown();
        assert!(report.all_joined());
        assert_eq!(report.workers.len(), 2);
        assert_eq!(
            report.nodes().collect::<Vec<_>>(),
            ["a", "b", "c", "flusher"]
        );
        assert_final_then_shutdown(&log.lock().expect("log lock"), &["a", "b", "c", "flusher"]);
        // The flush made it out, and the node (with its sender) is gone after the join.
        assert_eq!(flushed.try_recv(), Ok("buffered"));
        assert_eq!(flushed.try_recv(), Err(TryRecvError::Disconnected));
    });
}

#[test]
fn shutdown_of_an_engine_never_started_still_shuts_every_node_down() {
    watchdog(Duration::from_secs(10), || {
        let engine = engine(2);
        let log = Arc::new(Mutex::new(Vec::new()));
        engine.spawn(1, recorder("x", &log)).expect("worker exists");
        let report = engine.shutdown();
        assert_eq!(report.nodes().collect::<Vec<_>>(), ["x"]);
        assert_final_then_shutdown(&log.lock().expect("log lock"), &["x"]);
    });
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

#[test]
fn node_placed_after_start_is_adopted_and_its_edge_binds_to_its_worker() {
    watchdog(Duration::from_secs(10), || {
        let mut engine = engine(2);
        engine.start().expect("workers start");
        let (tx, input) = edge::<Instant>(4);
        let (report, reports) = mpsc::channel();
        engine
            .spawn(1, Stamper { input, report })
            .expect("worker exists");
        wait_parked(&engine, 1);
        tx.try_send(Instant::now()).expect("room");
        reports
            .recv_timeout(Duration::from_secs(2))
            .expect("the late node runs");
        let report = engine.shutdown();
        assert_eq!(report.workers[1].nodes, ["stamper"]);
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

#[test]
fn edge_binds_to_the_worker_that_first_reads_it() {
    watchdog(Duration::from_secs(10), || {
        let mut engine = engine(2);
        let (tx, input) = edge::<u8>(1);
        assert_eq!(input.bound_worker(), None);
        input.is_empty(); // a read on a non-worker thread does not bind
        assert_eq!(input.bound_worker(), None);
        let bound = Arc::new(AtomicU64::new(u64::MAX));

        struct Probe {
            input: EdgeRx<u8>,
            bound: Arc<AtomicU64>,
        }
        impl Node for Probe {
            fn name(&self) -> &str {
                "probe"
            }
            fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
                let _ = self.input.try_recv();
                if let Some(worker) = self.input.bound_worker() {
                    self.bound.store(worker as u64, Ordering::SeqCst);
                }
                Poll::IDLE
            }
        }
        engine
            .spawn(
                1,
                Probe {
                    input,
                    bound: Arc::clone(&bound),
                },
            )
            .expect("worker exists");
        engine.start().expect("workers start");
        wait_until(
            Duration::from_secs(2),
            "the probe reports its binding",
            || bound.load(Ordering::SeqCst) != u64::MAX,
        );
        assert_eq!(bound.load(Ordering::SeqCst), 1);
        drop(tx);
        engine.shutdown();
    });
}

#[test]
fn builder_and_placement_errors() {
    assert!(matches!(
        Engine::builder().workers(0).build(),
        Err(EngineError::NoWorkers)
    ));
    let mut engine = engine(2);
    assert_eq!(engine.worker_count(), 2);
    assert!(matches!(
        engine.spawn(2, Sleeper),
        Err(EngineError::NoSuchWorker {
            worker: 2,
            count: 2
        })
    ));
    let first = engine.spawn(0, Sleeper).expect("worker exists");
    let second = engine
        .spawn(1, Box::new(Sleeper) as Box<dyn Node>)
        .expect("worker exists");
    assert_ne!(first, second);
    assert!(engine.stats(2).is_none());
    engine.start().expect("workers start");
    assert!(engine.is_started());
    assert!(matches!(engine.start(), Err(EngineError::AlreadyStarted)));
    let default_workers = Engine::builder().build().expect("defaults are valid");
    assert!(default_workers.worker_count() >= 1);
}

#[test]
fn handles_cross_threads() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<EdgeTx<String>>();
    sync::<EdgeTx<String>>();
    send::<EdgeRx<String>>();
    send::<Wake>();
    sync::<Wake>();
    send::<Engine>();
    sync::<Engine>();
    send::<ShutdownReport>();
}
