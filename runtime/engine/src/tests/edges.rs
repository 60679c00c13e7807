//! Edges and handles across threads: many producers deliver every message exactly once, full and
//! disconnected edges hand the value back, and the handles are `Send` and `Sync` as promised.

use super::*;

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
