//! Ping-pong between two nodes through bounded edges: every answer comes back in order, under
//! backpressure, with parking on every idle moment, and for random capacities and placements.

use proptest::prelude::*;

use super::*;

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
