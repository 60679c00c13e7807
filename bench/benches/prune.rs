//! Pruning a window of 1,000 events whose vectors are already computed (DESIGN §5: ≤ 50 µs):
//! score every candidate against the query (dense cosine), rank, select what stays, order both
//! lists by time. Printed against two floors measured in the same run: a plain sort of 1,000
//! `f32` scores, and the 1,000 dot products alone (reading the window's vectors once, which at
//! 512-d is 2 MB: more than a core's L2, so it streams from L3).
//!
//! Cases: 512-d (the default model) and 384-d (the English alternative) with every event in the
//! query's space; 512-d with half the events in another model's space (scored by sparse cosine,
//! ranked in their own group); an empty query (recency only). Plans and baselines alternate
//! round by round so drift on a shared machine hits them alike; criterion then times the
//! headline case.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use hearth_bench::{Samples, pin_to_core, report, us};
use hearth_memory::simd::{Kernel, Matrix};
use hearth_memory::{DenseRef, PruneEvent, PruneQuery, SparseVector, plan_prune};

/// The core the measuring thread runs on.
const CORE: usize = 1;
const EVENTS: usize = 1_000;
/// SPEC §4.7 defaults: `max_context_size` 30 → top_k 29; 10 protected.
const TOP_K: usize = 29;
const PROTECTED: usize = 10;
const BUDGET: Duration = Duration::from_micros(50);
const FP: &str = "model:a555d41559da:512:mean";
const OTHER_FP: &str = "model:000000000000:512:mean";

/// xorshift64: reproducible data without a random-number crate.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn next(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }

    fn unit(&mut self, dim: usize) -> Vec<f32> {
        let mut v: Vec<f32> = (0..dim).map(|_| self.next()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= n);
        v
    }

    fn sparse(&mut self) -> SparseVector {
        SparseVector::from_pairs(
            (0..12)
                .map(|_| (self.next_u64() % 400, 0.1 + self.next().abs()))
                .collect(),
        )
    }
}

/// The window's vectors live in one contiguous matrix, as a window cache would keep them.
struct Window {
    dense: Matrix,
    sparse: Vec<SparseVector>,
    query: Vec<f32>,
    query_sparse: SparseVector,
}

impl Window {
    fn new(rng: &mut Rng, dim: usize) -> Self {
        let mut dense = Matrix::with_capacity(dim, EVENTS);
        for _ in 0..EVENTS {
            dense
                .push_normalized(&rng.unit(dim))
                .expect("row has the matrix dim");
        }
        Self {
            dense,
            sparse: (0..EVENTS).map(|_| rng.sparse()).collect(),
            query: rng.unit(dim),
            query_sparse: rng.sparse(),
        }
    }

    /// Events in time order; every `foreign_every`-th one (0: none) has a vector of another
    /// model and is scored by its sparse vector.
    fn events(&self, foreign_every: usize) -> Vec<PruneEvent<'_>> {
        (0..EVENTS)
            .map(|i| {
                let foreign = foreign_every > 0 && i % foreign_every == 0;
                PruneEvent {
                    timestamp_ms: i as i64 * 1000,
                    dense: Some(DenseRef {
                        fingerprint: if foreign { OTHER_FP } else { FP },
                        values: self.dense.get(i).expect("row exists"),
                    }),
                    sparse: foreign.then_some(&self.sparse[i]),
                }
            })
            .collect()
    }

    fn query(&self) -> PruneQuery<'_> {
        PruneQuery {
            dense: Some(DenseRef {
                fingerprint: FP,
                values: &self.query,
            }),
            sparse: Some(&self.query_sparse),
        }
    }
}

fn timed(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn verdict(label: &str, samples: &Samples) {
    println!(
        "   {label}: p50 {:.2} µs (budget ≤ {} µs): {}",
        us(samples.p50()),
        us(BUDGET),
        if samples.p50() <= BUDGET {
            "within budget"
        } else {
            "OVER BUDGET"
        }
    );
}

/// One width: prune (all dense, and for 512-d also half sparse and an empty query) against the
/// sort and the bare dot products.
fn width_case(dim: usize, rounds: usize, rng: &mut Rng) {
    let window = Window::new(rng, dim);
    let dense_only = window.events(0);
    let mixed = window.events(2);
    let query = window.query();
    let empty_sparse = SparseVector::default();
    let empty = PruneQuery {
        dense: None,
        sparse: Some(&empty_sparse),
    };
    let kernel = Kernel::best();
    let scores: Vec<f32> = window
        .dense
        .iter()
        .map(|v| kernel.dot(&window.query, v))
        .collect();

    // Sanity: the plan is a real prune (keeps top_k, archives the rest).
    let plan = plan_prune(&dense_only, &query, TOP_K, PROTECTED);
    assert_eq!(plan.keep.len(), TOP_K);
    assert_eq!(plan.archive.len(), EVENTS - TOP_K);
    for _ in 0..(rounds / 10).max(3) {
        black_box(plan_prune(&dense_only, &query, TOP_K, PROTECTED));
    }

    let (mut dense_t, mut mixed_t, mut empty_t, mut sort_t, mut dots_t) =
        (vec![], vec![], vec![], vec![], vec![]);
    let mut buf = scores.clone();
    let mut dots = vec![0.0f32; EVENTS];
    for _ in 0..rounds {
        dense_t.push(timed(|| {
            black_box(plan_prune(black_box(&dense_only), &query, TOP_K, PROTECTED));
        }));
        buf.copy_from_slice(&scores);
        sort_t.push(timed(|| {
            black_box(&mut buf).sort_unstable_by(|a, b| b.total_cmp(a));
        }));
        dots_t.push(timed(|| {
            for (out, v) in dots.iter_mut().zip(window.dense.iter()) {
                *out = kernel.dot(black_box(&window.query), v);
            }
            black_box(&dots);
        }));
        if dim == 512 {
            mixed_t.push(timed(|| {
                black_box(plan_prune(black_box(&mixed), &query, TOP_K, PROTECTED));
            }));
            empty_t.push(timed(|| {
                black_box(plan_prune(black_box(&dense_only), &empty, TOP_K, PROTECTED));
            }));
        }
    }
    let (dense_t, sort_t, dots_t) = (
        Samples::new(dense_t),
        Samples::new(sort_t),
        Samples::new(dots_t),
    );
    report(
        &format!(
            "prune 1,000 events, {dim}-d, all in the query's dense space, vs a plain sort of 1,000 f32"
        ),
        &dense_t,
        "sort_unstable 1,000 f32 scores",
        &sort_t,
        None,
    );
    println!(
        "   vs the 1,000 dot products alone [{}]: {}  → {:.2}x; planning adds {:.2} µs",
        kernel.name(),
        dots_t.line(),
        us(dense_t.p50()) / us(dots_t.p50()).max(1e-9),
        us(dense_t.p50()) - us(dots_t.p50())
    );
    verdict(&format!("{dim}-d prune"), &dense_t);
    if dim == 512 {
        let (mixed_t, empty_t) = (Samples::new(mixed_t), Samples::new(empty_t));
        report(
            "prune 1,000 events, 512-d, half scored sparse (another model's vectors), vs the sort",
            &mixed_t,
            "sort_unstable 1,000 f32 scores",
            &sort_t,
            None,
        );
        verdict("512-d half-sparse prune", &mixed_t);
        report(
            "prune 1,000 events, empty query (keeps the newest), vs the sort",
            &empty_t,
            "sort_unstable 1,000 f32 scores",
            &sort_t,
            None,
        );
        verdict("empty-query prune", &empty_t);
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not and wants a quick smoke run.
    let full = std::env::args().any(|arg| arg == "--bench");
    let rounds = if full { 3_000 } else { 20 };
    let pinned = pin_to_core(CORE);
    println!(
        "   prune of {EVENTS} events, top_k {TOP_K}, {PROTECTED} protected; kernel {}; {}",
        Kernel::best().name(),
        if pinned {
            format!("pinned to core {CORE}")
        } else {
            "unpinned".to_owned()
        }
    );
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for dim in [512, 384] {
        width_case(dim, rounds, &mut rng);
    }

    let window = Window::new(&mut rng, 512);
    let events = window.events(0);
    let query = window.query();
    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    criterion.bench_function("prune/1000x512/dense", |b| {
        b.iter(|| plan_prune(black_box(&events), &query, TOP_K, PROTECTED))
    });
    let kernel = Kernel::best();
    let scores: Vec<f32> = window
        .dense
        .iter()
        .map(|v| kernel.dot(&window.query, v))
        .collect();
    let mut buf = scores.clone();
    criterion.bench_function("prune/baseline_sort_1000_f32", |b| {
        b.iter(|| {
            buf.copy_from_slice(&scores);
            black_box(&mut buf).sort_unstable_by(|a, b| b.total_cmp(a));
        })
    });
    criterion.final_summary();
}
