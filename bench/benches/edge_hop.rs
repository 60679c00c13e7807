//! Edge hop between two workers with the consumer awake. Budget (DESIGN §5): p50 ≤ 1.5× a bare
//! crossbeam bounded-channel ping-pong measured in the same run.
//!
//! Both sides run the same exchange: one party sends a token, the other echoes it, the first times
//! each round trip (one clock reading per round trip, reused as the start of the next).
//! - hearth: a `Ping` node on worker 0 and a `Pong` node on worker 1 (pinned workers, spinning long
//!   enough never to park mid-batch), two engine edges of capacity 1.
//! - baseline: two threads pinned to the same two cores, spinning on two crossbeam `bounded(1)`
//!   channels.
//!
//! Batches of the two alternate, with a pause between them so the idle side's spinners have parked
//! before the other side measures. Percentiles come from per-round-trip samples; criterion then
//! times the same batches for its own statistics.

use std::hint::spin_loop;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use criterion::Criterion;
use crossbeam_channel as channel;
use hearth_bench::{Samples, pin_to_core, report};
use hearth_engine::{EdgeRx, EdgeTx, Engine, Node, NodeCx, Poll, edge};

const CAPACITY: usize = 1;
/// How long an idle worker keeps spinning: far longer than a round trip, so the consumer is awake.
const WORKER_SPIN: Duration = Duration::from_millis(5);
/// Empty polls after which the baseline echo thread blocks instead of spinning (a few ms).
const BASELINE_IDLE_SPINS: u32 = 200_000;
/// Lets the side that just ran stop spinning before the other side measures.
const SETTLE: Duration = Duration::from_millis(30);

struct Batch {
    rounds: u64,
    record: bool,
}

struct BatchResult {
    elapsed: Duration,
    samples: Vec<Duration>,
}

impl BatchResult {
    fn empty() -> Self {
        Self {
            elapsed: Duration::ZERO,
            samples: Vec::new(),
        }
    }
}

struct Run {
    left: u64,
    record: bool,
    samples: Vec<Duration>,
    started: Instant,
    sent_at: Instant,
}

/// Runs batches of round trips on command and reports their timings.
struct Ping {
    commands: EdgeRx<Batch>,
    results: EdgeTx<BatchResult>,
    out: EdgeTx<u64>,
    back: EdgeRx<u64>,
    run: Option<Run>,
}

impl Node for Ping {
    fn name(&self) -> &str {
        "ping"
    }

    fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
        let Some(run) = &mut self.run else {
            let Ok(batch) = self.commands.try_recv() else {
                return Poll::IDLE;
            };
            let now = Instant::now();
            self.run = Some(Run {
                left: batch.rounds,
                record: batch.record,
                samples: Vec::with_capacity(if batch.record {
                    batch.rounds as usize
                } else {
                    0
                }),
                started: now,
                sent_at: now,
            });
            self.out
                .try_send(0)
                .expect("one token in flight leaves room");
            return Poll::Busy;
        };
        let Ok(token) = self.back.try_recv() else {
            return Poll::IDLE;
        };
        let now = Instant::now();
        if run.record {
            run.samples.push(now - run.sent_at);
        }
        run.left -= 1;
        if run.left > 0 {
            run.sent_at = now;
            self.out
                .try_send(token + 1)
                .expect("one token in flight leaves room");
        } else if let Some(run) = self.run.take() {
            let result = BatchResult {
                elapsed: now - run.started,
                samples: run.samples,
            };
            if self.results.try_send(result).is_err() {
                panic!("the driver waits for every result");
            }
        }
        Poll::Busy
    }
}

/// Echoes every token.
struct Pong {
    input: EdgeRx<u64>,
    back: EdgeTx<u64>,
}

impl Node for Pong {
    fn name(&self) -> &str {
        "pong"
    }

    fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
        match self.input.try_recv() {
            Ok(token) => {
                self.back
                    .try_send(token)
                    .expect("one token in flight leaves room");
                Poll::Busy
            }
            Err(_) => Poll::IDLE,
        }
    }
}

/// Two nodes on two pinned workers.
struct HearthPair {
    engine: Engine,
    commands: EdgeTx<Batch>,
    results: EdgeRx<BatchResult>,
}

impl HearthPair {
    fn start() -> Self {
        let mut engine = Engine::builder()
            .workers(2)
            .pin(true)
            .spin(WORKER_SPIN)
            .build()
            .expect("two workers");
        let (commands, commands_rx) = edge(1);
        let (results_tx, results) = edge(1);
        let (out, input) = edge(CAPACITY);
        let (back_tx, back) = edge(CAPACITY);
        engine
            .spawn(
                0,
                Ping {
                    commands: commands_rx,
                    results: results_tx,
                    out,
                    back,
                    run: None,
                },
            )
            .expect("worker 0 exists");
        engine
            .spawn(
                1,
                Pong {
                    input,
                    back: back_tx,
                },
            )
            .expect("worker 1 exists");
        engine.start().expect("workers start");
        Self {
            engine,
            commands,
            results,
        }
    }

    fn run(&self, rounds: u64, record: bool) -> BatchResult {
        if rounds == 0 {
            return BatchResult::empty();
        }
        if self
            .commands
            .send_timeout(Batch { rounds, record }, Duration::from_secs(10))
            .is_err()
        {
            panic!("ping node takes commands");
        }
        match self.results.recv_timeout(Duration::from_secs(120)) {
            Ok(result) => result,
            Err(error) => panic!("hearth batch did not finish: {error}"),
        }
    }

    fn stop(self) {
        let report = self.engine.shutdown();
        let cores: Vec<_> = report.workers.iter().map(|w| w.core).collect();
        println!("   (hearth workers were pinned to cores {cores:?})");
    }
}

/// Two pinned threads spinning on bare crossbeam channels.
struct BarePair {
    commands: channel::Sender<Batch>,
    results: channel::Receiver<BatchResult>,
    threads: Vec<JoinHandle<()>>,
}

impl BarePair {
    fn start(cores: (usize, usize)) -> Self {
        let (commands, commands_rx) = channel::bounded::<Batch>(1);
        let (results_tx, results) = channel::bounded(1);
        let (out, input) = channel::bounded::<u64>(CAPACITY);
        let (back_tx, back) = channel::bounded::<u64>(CAPACITY);
        let ping = thread::spawn(move || {
            pin_to_core(cores.0);
            for batch in commands_rx {
                let started = Instant::now();
                let mut sent_at = started;
                let mut samples = Vec::with_capacity(if batch.record {
                    batch.rounds as usize
                } else {
                    0
                });
                out.try_send(0).expect("one token in flight leaves room");
                for left in (0..batch.rounds).rev() {
                    let token = loop {
                        match back.try_recv() {
                            Ok(token) => break token,
                            Err(channel::TryRecvError::Empty) => spin_loop(),
                            Err(channel::TryRecvError::Disconnected) => return,
                        }
                    };
                    let now = Instant::now();
                    if batch.record {
                        samples.push(now - sent_at);
                    }
                    if left > 0 {
                        sent_at = now;
                        out.try_send(token + 1)
                            .expect("one token in flight leaves room");
                    }
                }
                let elapsed = started.elapsed();
                if results_tx.send(BatchResult { elapsed, samples }).is_err() {
                    return;
                }
            }
        });
        let pong = thread::spawn(move || {
            pin_to_core(cores.1);
            let mut idle = 0u32;
            loop {
                let token = match input.try_recv() {
                    Ok(token) => token,
                    Err(channel::TryRecvError::Empty) if idle < BASELINE_IDLE_SPINS => {
                        idle += 1;
                        spin_loop();
                        continue;
                    }
                    Err(channel::TryRecvError::Empty) => match input.recv() {
                        Ok(token) => token,
                        Err(_) => return,
                    },
                    Err(channel::TryRecvError::Disconnected) => return,
                };
                idle = 0;
                back_tx
                    .try_send(token)
                    .expect("one token in flight leaves room");
            }
        });
        Self {
            commands,
            results,
            threads: vec![ping, pong],
        }
    }

    fn run(&self, rounds: u64, record: bool) -> BatchResult {
        if rounds == 0 {
            return BatchResult::empty();
        }
        if self.commands.send(Batch { rounds, record }).is_err() {
            panic!("baseline ping thread takes commands");
        }
        match self.results.recv_timeout(Duration::from_secs(120)) {
            Ok(result) => result,
            Err(error) => panic!("baseline batch did not finish: {error}"),
        }
    }

    fn stop(self) {
        drop(self.commands);
        for thread in self.threads {
            thread.join().expect("baseline thread ends");
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not and wants a quick smoke run.
    let full = std::env::args().any(|arg| arg == "--bench");
    let (batches, rounds) = if full { (10, 40_000) } else { (2, 2_000) };

    let hearth = HearthPair::start();
    let bare = BarePair::start(hearth_bench::two_cores());

    // Warm caches, branch predictors and the workers' spin state on both sides.
    hearth.run(rounds / 4, false);
    thread::sleep(SETTLE);
    bare.run(rounds / 4, false);
    thread::sleep(SETTLE);

    let mut hearth_samples = Vec::with_capacity((batches * rounds) as usize);
    let mut bare_samples = Vec::with_capacity((batches * rounds) as usize);
    for _ in 0..batches {
        hearth_samples.extend(hearth.run(rounds, true).samples);
        thread::sleep(SETTLE);
        bare_samples.extend(bare.run(rounds, true).samples);
        thread::sleep(SETTLE);
    }
    report(
        "edge hop round trip, 2 pinned workers, consumer awake (2 hops per sample)",
        &Samples::new(hearth_samples),
        "crossbeam bounded(1) ping-pong, 2 pinned spinning threads",
        &Samples::new(bare_samples),
        Some(1.5),
    );

    let mut criterion = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    criterion.bench_function("edge_hop/hearth_round_trip", |b| {
        b.iter_custom(|iters| hearth.run(iters, false).elapsed)
    });
    thread::sleep(SETTLE);
    criterion.bench_function("edge_hop/crossbeam_round_trip", |b| {
        b.iter_custom(|iters| bare.run(iters, false).elapsed)
    });
    criterion.final_summary();

    hearth.stop();
    bare.stop();
}
