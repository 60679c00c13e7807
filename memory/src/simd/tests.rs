//! Every kernel against the scalar reference, top-k against a full sort, and the matrix layout.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use proptest::prelude::*;

use super::*;

/// Relative error allowed between a kernel and the scalar reference (STYLE: SIMD).
const REL_TOL: f32 = 1e-5;

/// `|got - want| ≤ REL_TOL · Σ|aᵢbᵢ|`: the error is relative to the magnitude of the terms,
/// the quantity summation error scales with. (Relative to the result itself the bound would be
/// meaningless for sums that cancel to near zero.)
fn assert_close(got: f32, want: f32, magnitude: f32, what: &str) {
    let bound = REL_TOL * magnitude.max(f32::MIN_POSITIVE);
    assert!(
        (got - want).abs() <= bound,
        "{what}: got {got}, want {want}, |diff| {} > {bound}",
        (got - want).abs()
    );
}

fn magnitude(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x * y).abs()).sum()
}

fn dot_f64(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum()
}

/// Odd lengths 1..1100 and the real embedding dims.
fn dims() -> impl Strategy<Value = usize> {
    prop_oneof![4 => 1usize..1100, 1 => Just(384usize), 1 => Just(512usize)]
}

fn vector(dim: usize) -> impl Strategy<Value = Vec<f32>> {
    prop::collection::vec(-1.0f32..1.0, dim)
}

/// Two vectors of one random dim, with a random common scale to exercise magnitudes.
fn vector_pair() -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
    (dims(), -20i32..20).prop_flat_map(|(dim, exp)| {
        let scale = 2f32.powi(exp);
        (vector(dim), vector(dim))
            .prop_map(move |(a, b)| (scale_all(a, scale), scale_all(b, scale)))
    })
}

fn scale_all(mut v: Vec<f32>, scale: f32) -> Vec<f32> {
    v.iter_mut().for_each(|x| *x *= scale);
    v
}

/// A matrix of `rows` random rows and a query, over components from a small alphabet so that
/// equal scores (ties) are common.
fn tied_matrix(max_rows: usize, max_dim: usize) -> impl Strategy<Value = (Matrix, Vec<f32>)> {
    (0usize..max_rows, 1usize..max_dim).prop_flat_map(|(rows, dim)| {
        let component = prop::sample::select(vec![-1.0f32, 0.0, 0.5, 1.0, 2.0]);
        (
            prop::collection::vec(prop::collection::vec(component.clone(), dim), rows),
            prop::collection::vec(component, dim),
        )
            .prop_map(move |(rows, query)| {
                let mut matrix = Matrix::new(dim);
                for row in &rows {
                    matrix.push(row).expect("rows have the matrix dim");
                }
                (matrix, query)
            })
    })
}

/// The reference ranking: every score (same kernel, same unit query), fully sorted by score
/// descending then row ascending, filtered and truncated.
fn full_sort(
    kernel: Kernel,
    matrix: &Matrix,
    query: &[f32],
    k: usize,
    keep: impl Fn(usize) -> bool,
) -> Vec<(usize, f32)> {
    let mut unit = query.to_vec();
    normalize(&mut unit);
    let mut scores = vec![0.0; matrix.len()];
    kernel
        .scores(matrix, &unit, &mut scores)
        .expect("available kernel, matching dims");
    let mut all: Vec<(usize, f32)> = scores
        .into_iter()
        .enumerate()
        .filter(|&(row, _)| keep(row))
        .collect();
    all.sort_by(|a, b| b.1.partial_cmp(&a.1).expect("finite").then(a.0.cmp(&b.0)));
    all.truncate(k);
    all
}

/// Runs `body` on its own thread and fails the test if it takes longer than `limit`.
fn with_watchdog<T: Send + 'static>(
    limit: Duration,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done, wait) = mpsc::channel();
    thread::spawn(move || {
        let _ = done.send(body());
    });
    wait.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("test body did not finish within {limit:?}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn every_kernel_dot_matches_scalar((a, b) in vector_pair()) {
        let want = Kernel::Scalar.dot(&a, &b);
        let mag = magnitude(&a, &b);
        // The reference itself against exact (f64) arithmetic.
        assert_close(want, dot_f64(&a, &b) as f32, mag, "scalar vs f64");
        for kernel in Kernel::available() {
            assert_close(kernel.dot(&a, &b), want, mag, kernel.name());
        }
    }

    #[test]
    fn every_kernel_scores_match_scalar(
        (rows, query) in (dims(), 0usize..11).prop_flat_map(|(dim, rows)| {
            (prop::collection::vec(vector(dim), rows), vector(dim))
        })
    ) {
        let mut matrix = Matrix::new(query.len());
        for row in &rows {
            matrix.push(row).expect("rows have the matrix dim");
        }
        let mut want = vec![0.0; matrix.len()];
        Kernel::Scalar.scores(&matrix, &query, &mut want).expect("scalar always runs");
        for kernel in Kernel::available() {
            // One spare slot: it must be left alone.
            let mut got = vec![f32::NAN; matrix.len() + 1];
            kernel.scores(&matrix, &query, &mut got).expect("available kernel");
            for (i, row) in matrix.iter().enumerate() {
                assert_close(got[i], want[i], magnitude(row, &query), kernel.name());
                // A row scores the same in a scan as alone: parallel splits cannot reorder.
                prop_assert_eq!(got[i].to_bits(), kernel.dot(&query, row).to_bits());
            }
            prop_assert!(got[matrix.len()].is_nan());
        }
    }

    #[test]
    fn every_kernel_sum_matches_exact(data in (0usize..3000).prop_flat_map(vector)) {
        let exact: f64 = data.iter().map(|&x| f64::from(x)).sum();
        let mag: f32 = data.iter().map(|x| x.abs()).sum();
        for kernel in Kernel::available() {
            assert_close(kernel.sum(&data), exact as f32, mag, kernel.name());
        }
    }

    #[test]
    fn push_stores_unit_rows_in_the_same_direction(v in dims().prop_flat_map(vector)) {
        prop_assume!(v.iter().any(|&x| x != 0.0));
        let mut matrix = Matrix::new(v.len());
        let row = matrix.push(&v).expect("matching dim");
        let stored = matrix.get(row).expect("just pushed");
        let norm = dot_f64(stored, stored).sqrt();
        prop_assert!((norm - 1.0).abs() < 1e-5, "norm {norm}");
        let v_norm = dot_f64(&v, &v).sqrt();
        for (&s, &x) in stored.iter().zip(&v) {
            prop_assert!((f64::from(s) - f64::from(x) / v_norm).abs() < 1e-6);
        }
    }

    #[test]
    fn top_k_equals_a_full_sort((matrix, query) in tied_matrix(300, 40), k in 0usize..40) {
        for kernel in Kernel::available() {
            let got = TopK::new()
                .kernel(kernel)
                .parallel_min_rows(usize::MAX)
                .run(&matrix, &query, k)
                .expect("matching dim");
            prop_assert_eq!(got, full_sort(kernel, &matrix, &query, k, |_| true));
        }
    }

    #[test]
    fn top_k_where_equals_a_filtered_full_sort(
        (matrix, query) in tied_matrix(300, 24),
        k in 0usize..40,
        modulus in 1usize..5,
    ) {
        let keep = |row: usize| row.is_multiple_of(modulus);
        let got = top_k_where(&matrix, &query, k, keep).expect("matching dim");
        prop_assert!(got.iter().all(|&(row, _)| keep(row)));
        prop_assert_eq!(got, full_sort(Kernel::best(), &matrix, &query, k, keep));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// One scan's second list is the list a scan restricted to both tests would give, and its
    /// first list and moments are those of a plain scan, serial or parallel.
    #[test]
    fn a_scan_within_gives_both_lists_of_two_scans(
        (matrix, query) in tied_matrix(3000, 24),
        k in 1usize..20,
        modulus in 1usize..4,
        span in 0usize..3000,
    ) {
        let keep = |row: usize| row.is_multiple_of(modulus);
        let within = |row: usize| row >= span && row < span + 200;
        for parallel_min_rows in [usize::MAX, 0] {
            let top = TopK::new().parallel_min_rows(parallel_min_rows);
            let (scan, inside) = top
                .scan_where_within(&matrix, &query, k, keep, within)
                .expect("matching dim");
            let plain = top.scan_where(&matrix, &query, k, keep).expect("matching dim");
            prop_assert_eq!(&scan, &plain);
            let both = |row: usize| keep(row) && within(row);
            prop_assert_eq!(inside, full_sort(Kernel::best(), &matrix, &query, k, both));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The moments a scan returns are those of every row's score, whatever `keep` admits and
    /// however many rows the result holds, serial or parallel.
    #[test]
    fn scan_moments_are_those_of_every_rows_score(
        (matrix, query) in tied_matrix(3000, 24),
        k in 0usize..20,
        modulus in 1usize..4,
    ) {
        let keep = |row: usize| row.is_multiple_of(modulus);
        let all = full_sort(Kernel::best(), &matrix, &query, matrix.len(), |_| true);
        for parallel_min_rows in [usize::MAX, 0] {
            let scan = TopK::new()
                .parallel_min_rows(parallel_min_rows)
                .scan_where(&matrix, &query, k.max(1), keep)
                .expect("matching dim");
            prop_assert_eq!(scan.moments.count, matrix.len());
            let (mean, dev) = (scan.moments.mean(), scan.moments.std_dev());
            if matrix.is_empty() {
                prop_assert_eq!((mean, dev), (None, None));
                continue;
            }
            let exact_mean = all.iter().map(|s| f64::from(s.1)).sum::<f64>() / all.len() as f64;
            let exact_var = all
                .iter()
                .map(|s| (f64::from(s.1) - exact_mean).powi(2))
                .sum::<f64>()
                / all.len() as f64;
            prop_assert!((mean.expect("rows") - exact_mean).abs() < 1e-6);
            prop_assert!((dev.expect("rows") - exact_var.sqrt()).abs() < 1e-3);
            prop_assert_eq!(scan.hits, full_sort(Kernel::best(), &matrix, &query, k.max(1), keep));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Parallel tasks start at every multiple of the task size, so rows land in blocks at
    /// different offsets than in the serial scan; the ranking must not change.
    #[test]
    fn parallel_top_k_equals_serial(
        (matrix, query) in tied_matrix(5000, 20),
        k in 1usize..64,
    ) {
        let serial = TopK::new().parallel_min_rows(usize::MAX);
        let parallel = TopK::new().parallel_min_rows(0);
        prop_assert_eq!(
            parallel.run(&matrix, &query, k).expect("matching dim"),
            serial.run(&matrix, &query, k).expect("matching dim")
        );
        prop_assert_eq!(
            parallel.run_where(&matrix, &query, k, |row| row % 3 != 1).expect("matching dim"),
            serial.run_where(&matrix, &query, k, |row| row % 3 != 1).expect("matching dim")
        );
    }
}

/// A deterministic pseudo-random matrix (xorshift), large enough for the default parallel path.
fn big_matrix(rows: usize, dim: usize) -> (Matrix, Vec<f32>) {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        // Few distinct values: many exact ties across task boundaries.
        ((state >> 40) % 7) as f32 - 3.0
    };
    let mut matrix = Matrix::with_capacity(dim, rows);
    let mut row = vec![0.0; dim];
    for _ in 0..rows {
        row.iter_mut().for_each(|x| *x = next());
        matrix.push(&row).expect("matching dim");
    }
    let query = (0..dim).map(|_| next()).collect();
    (matrix, query)
}

#[test]
fn default_top_k_goes_parallel_at_the_threshold_and_matches_serial() {
    with_watchdog(Duration::from_secs(20), || {
        let (matrix, query) = big_matrix(PARALLEL_MIN_ROWS + 4099, 16);
        for k in [1, 10, 100] {
            let parallel = top_k(&matrix, &query, k).expect("matching dim");
            let serial = TopK::new()
                .parallel_min_rows(usize::MAX)
                .run(&matrix, &query, k)
                .expect("matching dim");
            assert_eq!(parallel.len(), k);
            assert_eq!(parallel, serial);
        }
    });
}

#[test]
fn available_kernels_are_supported_best_first_and_end_with_scalar() {
    let available = Kernel::available();
    assert_eq!(available.first(), Some(&Kernel::best()));
    assert_eq!(available.last(), Some(&Kernel::Scalar));
    assert!(available.iter().all(|k| k.is_supported()));
    for kernel in Kernel::ALL {
        assert_eq!(available.contains(&kernel), kernel.is_supported());
    }
    #[cfg(target_arch = "x86_64")]
    {
        assert_eq!(
            available.contains(&Kernel::Avx512),
            std::arch::is_x86_feature_detected!("avx512f")
        );
        assert!(!available.contains(&Kernel::Neon));
    }
}

#[test]
fn an_unsupported_kernel_is_refused_not_run() {
    let Some(missing) = Kernel::ALL.into_iter().find(|k| !k.is_supported()) else {
        return; // every kernel exists on this CPU: nothing to refuse
    };
    let mut matrix = Matrix::new(4);
    matrix.push(&[1.0, 0.0, 0.0, 0.0]).expect("matching dim");
    let mut out = [0.0];
    assert_eq!(
        missing.scores(&matrix, &[1.0; 4], &mut out),
        Err(SimdError::Unsupported(missing))
    );
    assert_eq!(
        TopK::new().kernel(missing).run(&matrix, &[1.0; 4], 1),
        Err(SimdError::Unsupported(missing))
    );
}

#[test]
fn storage_and_every_row_are_64_byte_aligned_with_zero_padding() {
    for dim in [1, 15, 16, 17, 100, 384, 512, 1000] {
        let mut matrix = Matrix::new(dim);
        assert_eq!(matrix.stride() % BLOCK_FLOATS, 0);
        assert!(matrix.stride() >= dim && matrix.stride() < dim + BLOCK_FLOATS);
        // Enough pushes to reallocate several times.
        for i in 0..200 {
            let row: Vec<f32> = (0..dim).map(|j| ((i * 31 + j) % 13) as f32 + 1.0).collect();
            matrix.push(&row).expect("matching dim");
            assert_eq!(matrix.as_slice().as_ptr() as usize % 64, 0, "dim {dim}");
        }
        let floats = matrix.as_slice();
        assert_eq!(floats.len(), matrix.len() * matrix.stride());
        for i in 0..matrix.len() {
            let row = matrix.get(i).expect("in range");
            assert_eq!(row.as_ptr() as usize % 64, 0, "dim {dim} row {i}");
            assert_eq!(row.len(), dim);
            let padding = &floats[i * matrix.stride() + dim..(i + 1) * matrix.stride()];
            assert!(padding.iter().all(|&x| x == 0.0), "dim {dim} row {i}");
        }
    }
}

#[test]
fn zero_vector_is_stored_as_zeros_and_scores_zero() {
    let mut matrix = Matrix::new(5);
    matrix.push(&[0.0; 5]).expect("matching dim");
    assert_eq!(matrix.get(0), Some(&[0.0; 5][..]));
    assert_eq!(top_k(&matrix, &[1.0; 5], 1), Ok(vec![(0, 0.0)]));
}

#[test]
fn push_normalized_stores_verbatim_and_normalize_scales_in_place() {
    let mut matrix = Matrix::new(2);
    matrix.push_normalized(&[0.6, 0.8]).expect("matching dim");
    matrix.push_normalized(&[3.0, 4.0]).expect("matching dim");
    assert_eq!(matrix.get(0), Some(&[0.6, 0.8][..]));
    assert_eq!(matrix.get(1), Some(&[3.0, 4.0][..]));
    let mut v = [3.0, 4.0];
    normalize(&mut v);
    assert!((v[0] - 0.6).abs() < 1e-7 && (v[1] - 0.8).abs() < 1e-7);
}

#[test]
fn wrong_dims_and_non_finite_components_are_rejected() {
    let mut matrix = Matrix::new(3);
    assert_eq!(
        matrix.push(&[1.0, 2.0]),
        Err(SimdError::DimMismatch {
            expected: 3,
            got: 2
        })
    );
    assert_eq!(
        matrix.push_normalized(&[1.0, f32::NAN, 0.0]),
        Err(SimdError::NonFinite { index: 1 })
    );
    assert_eq!(
        matrix.push(&[f32::INFINITY, 0.0, 0.0]),
        Err(SimdError::NonFinite { index: 0 })
    );
    assert!(matrix.is_empty(), "a rejected vector leaves no row behind");
    matrix.push(&[1.0, 0.0, 0.0]).expect("matching dim");
    assert_eq!(
        top_k(&matrix, &[1.0; 4], 1),
        Err(SimdError::DimMismatch {
            expected: 3,
            got: 4
        })
    );
    assert_eq!(
        top_k(&matrix, &[f32::NAN, 0.0, 0.0], 1),
        Err(SimdError::NonFinite { index: 0 })
    );
    let mut short: [f32; 0] = [];
    assert_eq!(
        Kernel::Scalar.scores(&matrix, &[1.0; 3], &mut short),
        Err(SimdError::OutputTooShort { needed: 1, got: 0 })
    );
}

#[test]
fn empty_matrix_scores_nothing_and_has_no_top_k() {
    let matrix = Matrix::new(384);
    assert!(matrix.is_empty() && matrix.as_slice().is_empty());
    for kernel in Kernel::available() {
        let mut out: [f32; 0] = [];
        assert_eq!(kernel.scores(&matrix, &[0.5; 384], &mut out), Ok(()));
    }
    assert_eq!(top_k(&matrix, &[0.5; 384], 10), Ok(vec![]));
    assert_eq!(top_k_where(&matrix, &[0.5; 384], 10, |_| true), Ok(vec![]));
}

#[test]
fn k_beyond_len_returns_every_row_ranked() {
    let mut matrix = Matrix::new(2);
    for v in [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]] {
        matrix.push(&v).expect("matching dim");
    }
    let got = top_k(&matrix, &[1.0, 0.0], 50).expect("matching dim");
    let rows: Vec<usize> = got.iter().map(|&(row, _)| row).collect();
    assert_eq!(rows, [0, 2, 1, 3]);
    assert!((got[1].1 - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    assert!((got[3].1 + 1.0).abs() < 1e-6);
    assert_eq!(top_k(&matrix, &[1.0, 0.0], 0), Ok(vec![]));
}

#[test]
fn ties_rank_the_lower_row_first() {
    let mut matrix = Matrix::new(3);
    for _ in 0..6 {
        matrix.push(&[0.0, 1.0, 0.0]).expect("matching dim");
    }
    matrix.push(&[0.0, 2.0, 0.0]).expect("matching dim"); // same unit row, later index
    let got = top_k(&matrix, &[0.0, 1.0, 0.0], 3).expect("matching dim");
    assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 1, 2]);
}

#[test]
fn swap_remove_moves_the_last_row_and_clear_empties() {
    let mut matrix = Matrix::new(20); // padded stride: the move must carry whole rows
    for i in 0..4 {
        let mut v = vec![0.0; 20];
        v[i] = 1.0;
        matrix.push(&v).expect("matching dim");
    }
    let last = matrix.get(3).expect("in range").to_vec();
    assert_eq!(matrix.swap_remove(1), Some(3));
    assert_eq!(matrix.len(), 3);
    assert_eq!(matrix.get(1), Some(&last[..]));
    assert_eq!(matrix.get(3), None);
    assert_eq!(matrix.swap_remove(2), None, "the last row moves nothing");
    assert_eq!(matrix.len(), 2);
    assert_eq!(matrix.as_slice().len(), 2 * matrix.stride());
    let best = top_k(&matrix, &last, 1).expect("matching dim");
    assert_eq!(best[0].0, 1, "scores follow the moved row");
    matrix.clear();
    assert!(matrix.is_empty() && matrix.as_slice().is_empty());
    assert_eq!(matrix.push(&last), Ok(0));
}

#[test]
#[should_panic(expected = "out of range")]
fn swap_remove_out_of_range_panics() {
    Matrix::new(4).swap_remove(0);
}

#[test]
#[should_panic(expected = "different lengths")]
fn dot_of_mismatched_lengths_panics() {
    Kernel::best().dot(&[1.0, 2.0], &[1.0]);
}

#[test]
fn debug_shows_the_shape_not_the_floats() {
    let mut matrix = Matrix::new(20);
    matrix.push(&[1.5; 20]).expect("matching dim");
    let shown = format!("{matrix:?}");
    assert_eq!(shown, "Matrix { dim: 20, stride: 32, len: 1, .. }");
}
