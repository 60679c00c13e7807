//! Cosine scan over unit-length rows: every kernel the CPU has against the scalar kernel, and the
//! large case against the machine's own read bandwidth. Budgets (DESIGN §5):
//! - 384-d × 100k rows (≈ 150 MB, far beyond L2): the scan reaches ≥ 80 % of the single-core read
//!   bandwidth measured in the same run by a streaming sum over the same bytes with the widest
//!   loads available (`Kernel::sum`), i.e. scan time ≤ 1.25× the streaming time;
//! - 384-d × 1k rows (1.5 MB, L2-resident): p50 ≤ 25 µs with the best kernel.
//!
//! Also 512-d (the default embedder's width), and `top_k(10)` over 100k rows, serial on the
//! pinned core and on the thread pool. Kernels and the baseline alternate round by round so that
//! drift on a shared machine hits all of them alike. Criterion then times the two headline paths
//! for its own statistics.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use hearth_bench::{Samples, pin_to_core, report, us};
use hearth_memory::simd::{Kernel, Matrix, QuantMatrix, TopK};

/// The core the measuring thread runs on.
const CORE: usize = 1;
/// Streaming-baseline time ratio allowed for the DRAM-bound scan: 1 / 0.80.
const STREAM_BUDGET: f64 = 1.25;
/// p50 budget of the L2-resident 384-d × 1k scan.
const SMALL_SCAN_BUDGET: Duration = Duration::from_micros(25);

struct Case {
    dim: usize,
    rows: usize,
    rounds: usize,
    /// Compared with the streaming baseline (the DRAM-bound case).
    large: bool,
}

/// xorshift64: reproducible data without a random-number crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }

    fn vector(&mut self, dim: usize) -> Vec<f32> {
        (0..dim).map(|_| self.next()).collect()
    }
}

fn random_matrix(rng: &mut Rng, dim: usize, rows: usize) -> Matrix {
    let mut matrix = Matrix::with_capacity(dim, rows);
    let mut row = vec![0.0; dim];
    for _ in 0..rows {
        row.iter_mut().for_each(|x| *x = rng.next());
        matrix.push(&row).expect("row has the matrix dim");
    }
    matrix
}

fn timed(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn gbps(bytes: usize, samples: &Samples) -> f64 {
    bytes as f64 / samples.p50().as_secs_f64() / 1e9
}

fn label(rows: usize) -> String {
    if rows.is_multiple_of(1000) {
        format!("{}k", rows / 1000)
    } else {
        rows.to_string()
    }
}

fn scan_case(case: &Case, rng: &mut Rng) {
    let matrix = random_matrix(rng, case.dim, case.rows);
    let query = rng.vector(case.dim);
    let mut out = vec![0.0f32; matrix.len()];
    let bytes = std::mem::size_of_val(matrix.as_slice());
    let kernels = Kernel::available();
    let best = Kernel::best();
    let name = format!(
        "{}-d × {} rows ({:.1} MB)",
        case.dim,
        label(case.rows),
        bytes as f64 / 1e6
    );

    // Warm-up: page in the matrix and bring each code path into the caches.
    for _ in 0..3 {
        black_box(best.sum(matrix.as_slice()));
        for &kernel in &kernels {
            kernel
                .scores(&matrix, &query, &mut out)
                .expect("available kernel");
        }
    }

    let mut stream = Vec::with_capacity(case.rounds);
    let mut scans: Vec<Vec<Duration>> = kernels
        .iter()
        .map(|_| Vec::with_capacity(case.rounds))
        .collect();
    for _ in 0..case.rounds {
        stream.push(timed(|| {
            black_box(best.sum(black_box(matrix.as_slice())));
        }));
        for (&kernel, samples) in kernels.iter().zip(&mut scans) {
            samples.push(timed(|| {
                kernel
                    .scores(&matrix, black_box(&query), &mut out)
                    .expect("available kernel");
            }));
            black_box(&out);
        }
    }
    let stream = Samples::new(stream);
    let scans: Vec<Samples> = scans.into_iter().map(Samples::new).collect();

    println!("== cosine scan {name}");
    println!(
        "   {:<18} {}  {:>6.1} GB/s",
        format!("stream sum [{}]", best.name()),
        stream.line(),
        gbps(bytes, &stream)
    );
    for (kernel, samples) in kernels.iter().zip(&scans) {
        println!(
            "   {:<18} {}  {:>6.1} GB/s",
            format!("scan [{}]", kernel.name()),
            samples.line(),
            gbps(bytes, samples)
        );
    }
    let scalar = scans.last().expect("scalar is always available");
    for (kernel, samples) in kernels.iter().zip(&scans) {
        if *kernel != Kernel::Scalar {
            println!(
                "   {} vs scalar: {:.2}x faster (p50)",
                kernel.name(),
                us(scalar.p50()) / us(samples.p50())
            );
        }
    }
    let best_scan = &scans[0];
    if case.large {
        report(
            &format!(
                "cosine scan {name}, {} vs streaming read of the same bytes",
                best.name()
            ),
            best_scan,
            &format!("{} streaming sum", best.name()),
            &stream,
            Some(STREAM_BUDGET),
        );
        let share = us(stream.p50()) / us(best_scan.p50());
        println!(
            "   scan bandwidth = {:.0} % of streaming (budget ≥ 80 %): {}",
            share * 100.0,
            if share >= 1.0 / STREAM_BUDGET {
                "within budget"
            } else {
                "OVER BUDGET"
            }
        );
    } else if case.dim == 384 {
        println!(
            "   {} p50 {:.2} µs (budget ≤ {} µs): {}",
            best.name(),
            us(best_scan.p50()),
            us(SMALL_SCAN_BUDGET),
            if best_scan.p50() <= SMALL_SCAN_BUDGET {
                "within budget"
            } else {
                "OVER BUDGET"
            }
        );
    }
}

fn top_k_case(dim: usize, rows: usize, rounds: usize, cores: usize, rng: &mut Rng) {
    let matrix = random_matrix(rng, dim, rows);
    let query = rng.vector(dim);
    let mut out = vec![0.0f32; matrix.len()];
    let best = Kernel::best();
    let serial = TopK::new().parallel_min_rows(usize::MAX);
    let pooled = TopK::new().parallel_min_rows(0);

    let mut scan = Vec::with_capacity(rounds);
    let mut one_core = Vec::with_capacity(rounds);
    let mut pool = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        scan.push(timed(|| {
            best.scores(&matrix, black_box(&query), &mut out)
                .expect("available kernel");
        }));
        one_core.push(timed(|| {
            black_box(
                serial
                    .run(&matrix, black_box(&query), 10)
                    .expect("matching dim"),
            );
        }));
        pool.push(timed(|| {
            black_box(
                pooled
                    .run(&matrix, black_box(&query), 10)
                    .expect("matching dim"),
            );
        }));
    }
    let (scan, one_core, pool) = (
        Samples::new(scan),
        Samples::new(one_core),
        Samples::new(pool),
    );
    report(
        &format!(
            "top_k(10) over {dim}-d × {} rows, serial on one core, vs the bare scan",
            label(rows)
        ),
        &one_core,
        &format!("{} scores into a buffer", best.name()),
        &scan,
        None,
    );
    report(
        &format!(
            "top_k(10) over {dim}-d × {} rows on the thread pool ({} cores), vs serial",
            label(rows),
            cores
        ),
        &pool,
        "serial top_k",
        &one_core,
        None,
    );
}

/// Cold context's index keeps a byte per component: top-k over the same rows quantized, against
/// the f32 matrix, alternating round by round.
fn quantized_case(dim: usize, rows: usize, rounds: usize, rng: &mut Rng) {
    let matrix = random_matrix(rng, dim, rows);
    let mut quantized = QuantMatrix::new(dim);
    for row in matrix.iter() {
        quantized.push(row).expect("matching dim");
    }
    let query = rng.vector(dim);
    let serial = TopK::new().parallel_min_rows(usize::MAX);
    let (mut bytes, mut floats) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    let (mut same, mut total) = (0usize, 0usize);
    for _ in 0..rounds {
        let mut q_hits = Vec::new();
        let mut f_hits = Vec::new();
        bytes.push(timed(|| {
            q_hits = serial
                .run(&quantized, black_box(&query), 10)
                .expect("matching dim");
        }));
        floats.push(timed(|| {
            f_hits = serial
                .run(&matrix, black_box(&query), 10)
                .expect("matching dim");
        }));
        total += f_hits.len();
        same += q_hits
            .iter()
            .filter(|(row, _)| f_hits.iter().any(|(f, _)| f == row))
            .count();
    }
    report(
        &format!(
            "top_k(10) over {dim}-d × {} quantized rows (one byte per component), vs f32 rows",
            label(rows)
        ),
        &Samples::new(bytes),
        "f32 top_k",
        &Samples::new(floats),
        None,
    );
    println!(
        "   the same top 10 as f32: {same} of {total} hits ({:.1} %)",
        100.0 * same as f64 / total.max(1) as f64
    );
}

fn criterion_pass(criterion: &mut Criterion, rows_small: usize, rows_large: usize, rng: &mut Rng) {
    let small = random_matrix(rng, 384, rows_small);
    let large = random_matrix(rng, 384, rows_large);
    let query = rng.vector(384);
    let mut out = vec![0.0f32; rows_small];
    let best = Kernel::best();
    criterion.bench_function(
        &format!("cosine/scan_384x{}/{}", label(rows_small), best.name()),
        |b| {
            b.iter(|| {
                best.scores(&small, black_box(&query), &mut out)
                    .expect("available kernel")
            })
        },
    );
    criterion.bench_function(
        &format!("cosine/scan_384x{}/scalar", label(rows_small)),
        |b| {
            b.iter(|| {
                Kernel::Scalar
                    .scores(&small, black_box(&query), &mut out)
                    .expect("scalar always runs")
            })
        },
    );
    let serial = TopK::new().parallel_min_rows(usize::MAX);
    criterion.bench_function(
        &format!("cosine/top_k10_384x{}/serial", label(rows_large)),
        |b| {
            b.iter(|| {
                serial
                    .run(&large, black_box(&query), 10)
                    .expect("matching dim")
            })
        },
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not and wants a quick smoke run.
    let full = std::env::args().any(|arg| arg == "--bench");
    let (small, large, small_rounds, large_rounds) = if full {
        (1_000, 100_000, 3_000, 40)
    } else {
        (1_000, 4_000, 20, 3)
    };

    // Start the thread pool before pinning: its threads inherit the affinity of the thread
    // that creates them, and a pool confined to one core would measure nothing.
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let warm = random_matrix(&mut rng, 16, 64);
    TopK::new()
        .parallel_min_rows(0)
        .run(&warm, &[1.0; 16], 1)
        .expect("matching dim");
    // Read before pinning: afterwards the affinity mask says one core.
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let pinned = pin_to_core(CORE);
    println!(
        "   kernels on this CPU: {:?} (best {}); measuring thread {}",
        Kernel::available()
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>(),
        Kernel::best().name(),
        if pinned {
            format!("pinned to core {CORE}")
        } else {
            "unpinned".to_string()
        }
    );

    for dim in [384, 512] {
        for (rows, rounds, large) in [(small, small_rounds, false), (large, large_rounds, true)] {
            scan_case(
                &Case {
                    dim,
                    rows,
                    rounds,
                    large,
                },
                &mut rng,
            );
        }
    }
    top_k_case(384, large, large_rounds, cores, &mut rng);
    for dim in [384, 512] {
        quantized_case(dim, large, large_rounds, &mut rng);
    }

    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    criterion_pass(&mut criterion, small, large, &mut rng);
    criterion.final_summary();
}
