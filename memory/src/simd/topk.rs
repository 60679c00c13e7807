//! The `k` rows most similar to a query, without sorting every score.
//!
//! Rows are scored a block at a time into a small stack buffer (it stays in L1) and offered to a
//! bounded min-heap of the best `k` so far: O(n log k), one pass over the matrix. Matrices of
//! [`PARALLEL_MIN_ROWS`] rows or more are split into row ranges scored on the rayon pool, each
//! range keeping its own heap, and the heaps are merged. The ranking is a total order (score
//! descending, then row index ascending) and a row's score does not depend on how the rows were
//! split (see the kernel module), so the parallel and serial results are identical.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::ops::Range;

use rayon::prelude::*;

use super::matrix::{check_vector, normalize};
use super::{Kernel, Matrix, SimdError};

/// Matrices with at least this many rows are scanned in parallel. Below it the scan is short
/// (32k × 384-d is ~50 MB, a few milliseconds on one core) and waking the pool costs more than
/// it saves.
pub const PARALLEL_MIN_ROWS: usize = 32_768;

/// Rows scored per kernel call: the scores buffer (4 KiB) stays in L1 while the heap reads it.
const SCORE_BLOCK_ROWS: usize = 1024;

/// Smallest row range a parallel task takes, so tasks stay large against their scheduling cost.
const MIN_TASK_ROWS: usize = 1024;

/// Rows a [`TopK`] scans: unit vectors of one dimension, scored against a unit query a block of
/// rows at a time. A row's score must not depend on the block it is scored in, so parallel and
/// serial scans rank alike.
pub trait Rows: Sync {
    /// Width of a row.
    fn dim(&self) -> usize;
    /// Number of rows.
    fn len(&self) -> usize;
    /// Whether there are no rows.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Writes the scores of rows `range` against `unit` into `out` (`range.len()` long).
    fn scan(&self, kernel: Kernel, range: Range<usize>, unit: &[f32], out: &mut [f32]);
}

impl Rows for Matrix {
    fn dim(&self) -> usize {
        Matrix::dim(self)
    }

    fn len(&self) -> usize {
        Matrix::len(self)
    }

    fn scan(&self, kernel: Kernel, range: Range<usize>, unit: &[f32], out: &mut [f32]) {
        let stride = self.stride();
        let floats = &self.as_slice()[range.start * stride..range.end * stride];
        kernel.scan(floats, stride, unit, out);
    }
}

/// A top-k query: which kernel, and from what size on to use the thread pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopK {
    kernel: Kernel,
    parallel_min_rows: usize,
}

impl Default for TopK {
    fn default() -> Self {
        Self::new()
    }
}

impl TopK {
    /// The best kernel of this CPU, parallel from [`PARALLEL_MIN_ROWS`] rows on.
    pub fn new() -> Self {
        Self {
            kernel: Kernel::best(),
            parallel_min_rows: PARALLEL_MIN_ROWS,
        }
    }

    /// Scores with `kernel` instead of the best one.
    pub fn kernel(self, kernel: Kernel) -> Self {
        Self { kernel, ..self }
    }

    /// Scans in parallel when the matrix has at least `rows` rows (`usize::MAX`: never).
    pub fn parallel_min_rows(self, rows: usize) -> Self {
        Self {
            parallel_min_rows: rows,
            ..self
        }
    }

    /// The `k` rows of `matrix` with the highest cosine similarity to `query`, as
    /// `(row, score)` sorted by score descending, ties by lower row first. Fewer than `k` when
    /// the matrix is smaller. `query` need not be unit length.
    pub fn run<M: Rows + ?Sized>(
        &self,
        matrix: &M,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<(usize, f32)>, SimdError> {
        self.run_where(matrix, query, k, |_| true)
    }

    /// As [`TopK::run`], over only the rows for which `keep(row)` is true. `keep` is asked only
    /// about rows whose score could enter the result, possibly from several threads and in any
    /// order, so it should be a pure test (e.g. a lookup in a tombstone or fingerprint table).
    pub fn run_where<M, F>(
        &self,
        matrix: &M,
        query: &[f32],
        k: usize,
        keep: F,
    ) -> Result<Vec<(usize, f32)>, SimdError>
    where
        M: Rows + ?Sized,
        F: Fn(usize) -> bool + Sync,
    {
        Ok(self.scan_where(matrix, query, k, keep)?.hits)
    }

    /// As [`TopK::run_where`], with the moments of every row's score beside the hits: the
    /// distribution of the whole matrix against `query` (rows `keep` would refuse included,
    /// since it is asked only about rows that could enter the result), which tells how far the
    /// best stand out. Summing them costs two additions per row on scores already in L1.
    pub fn scan_where<M, F>(
        &self,
        matrix: &M,
        query: &[f32],
        k: usize,
        keep: F,
    ) -> Result<Scan, SimdError>
    where
        M: Rows + ?Sized,
        F: Fn(usize) -> bool + Sync,
    {
        Ok(self.scan_picks(matrix, query, k, &keep, None)?.0)
    }

    /// As [`TopK::scan_where`], and from the same scores the best `k` of the kept rows that
    /// `within` also takes (e.g. those inside a time span): two lists for one pass over the
    /// matrix. `within`, like `keep`, is asked only about rows that could enter its list.
    pub fn scan_where_within<M, F, G>(
        &self,
        matrix: &M,
        query: &[f32],
        k: usize,
        keep: F,
        within: G,
    ) -> Result<(Scan, Vec<(usize, f32)>), SimdError>
    where
        M: Rows + ?Sized,
        F: Fn(usize) -> bool + Sync,
        G: Fn(usize) -> bool + Sync,
    {
        self.scan_picks(matrix, query, k, &keep, Some(&within))
    }

    /// The scan behind [`TopK::scan_where`] and [`TopK::scan_where_within`]: the whole list,
    /// and the list within `within` (empty without it).
    fn scan_picks<M>(
        &self,
        matrix: &M,
        query: &[f32],
        k: usize,
        keep: &(dyn Fn(usize) -> bool + Sync),
        within: Option<&(dyn Fn(usize) -> bool + Sync)>,
    ) -> Result<(Scan, Vec<(usize, f32)>), SimdError>
    where
        M: Rows + ?Sized,
    {
        if !self.kernel.is_supported() {
            return Err(SimdError::Unsupported(self.kernel));
        }
        check_vector(query, matrix.dim())?;
        let rows = matrix.len();
        if k == 0 || rows == 0 {
            return Ok(Default::default());
        }
        let mut unit = query.to_vec();
        normalize(&mut unit);

        let threads = rayon::current_num_threads();
        let picks = if rows >= self.parallel_min_rows && threads > 1 {
            let task_rows = rows.div_ceil(threads * 4).max(MIN_TASK_ROWS);
            (0..rows.div_ceil(task_rows))
                .into_par_iter()
                .map(|task| {
                    let range = task * task_rows..rows.min((task + 1) * task_rows);
                    self.select(matrix, &unit, range, k, keep, within)
                })
                .reduce(|| Picks::new(k, within.is_some()), Picks::merge)
        } else {
            self.select(matrix, &unit, 0..rows, k, keep, within)
        };
        let moments = picks.all.moments;
        Ok((
            Scan {
                hits: picks.all.into_sorted(),
                moments,
            },
            picks.within.into_sorted(),
        ))
    }

    /// The best `k` of `range` (and of those `within` takes), scored a block at a time.
    fn select<M>(
        &self,
        matrix: &M,
        unit: &[f32],
        range: Range<usize>,
        k: usize,
        keep: &(dyn Fn(usize) -> bool + Sync),
        within: Option<&(dyn Fn(usize) -> bool + Sync)>,
    ) -> Picks
    where
        M: Rows + ?Sized,
    {
        let mut picks = Picks::new(k, within.is_some());
        // Tested before the second heap, so a plain scan pays one predicted branch per row.
        let has_within = within.is_some();
        let mut scores = [0.0f32; SCORE_BLOCK_ROWS];
        let mut start = range.start;
        while start < range.end {
            let end = range.end.min(start + SCORE_BLOCK_ROWS);
            let block = &mut scores[..end - start];
            matrix.scan(self.kernel, start..end, unit, block);
            picks.all.moments.add(block);
            for (row, &score) in (start..end).zip(block.iter()) {
                let to_all = picks.all.admits(score);
                let to_within = has_within && picks.within.admits(score);
                if (to_all || to_within) && keep(row) {
                    let candidate = Candidate { score, row };
                    if to_all {
                        picks.all.offer(candidate);
                    }
                    if to_within && within.is_some_and(|w| w(row)) {
                        picks.within.offer(candidate);
                    }
                }
            }
            start = end;
        }
        picks
    }
}

/// The best rows of a scan, and the best of those a second test takes (`k` 0 without one).
struct Picks {
    all: Best,
    within: Best,
}

impl Picks {
    fn new(k: usize, within: bool) -> Self {
        Self {
            all: Best::new(k),
            within: Best::new(if within { k } else { 0 }),
        }
    }

    fn merge(self, other: Picks) -> Picks {
        Picks {
            all: self.all.merge(other.all),
            within: self.within.merge(other.within),
        }
    }
}

/// [`TopK::run`] with the best kernel.
pub fn top_k(matrix: &Matrix, query: &[f32], k: usize) -> Result<Vec<(usize, f32)>, SimdError> {
    TopK::new().run(matrix, query, k)
}

/// [`TopK::run_where`] with the best kernel.
pub fn top_k_where<F>(
    matrix: &Matrix,
    query: &[f32],
    k: usize,
    keep: F,
) -> Result<Vec<(usize, f32)>, SimdError>
where
    F: Fn(usize) -> bool + Sync,
{
    TopK::new().run_where(matrix, query, k, keep)
}

/// What a scan found: the best rows, and the moments of every row's score.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scan {
    /// `(row, score)`, best first, as [`TopK::run_where`] returns them.
    pub hits: Vec<(usize, f32)>,
    /// Count, sum and sum of squares of the scores of every row scanned (none when `k` is 0:
    /// nothing is scanned then).
    pub moments: ScoreMoments,
}

/// Count, sum and sum of squares of a set of scores, summed in `f64` (a million cosines lose
/// nothing that matters to a mean or a deviation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ScoreMoments {
    /// How many scores.
    pub count: usize,
    /// Their sum.
    pub sum: f64,
    /// The sum of their squares.
    pub sum_sq: f64,
}

impl ScoreMoments {
    /// Adds `scores`.
    #[inline]
    pub fn add(&mut self, scores: &[f32]) {
        let (mut sum, mut sum_sq) = (0.0f64, 0.0f64);
        for &s in scores {
            let s = f64::from(s);
            sum += s;
            sum_sq += s * s;
        }
        self.count += scores.len();
        self.sum += sum;
        self.sum_sq += sum_sq;
    }

    /// Both sets of scores together.
    pub fn merge(self, other: ScoreMoments) -> ScoreMoments {
        ScoreMoments {
            count: self.count + other.count,
            sum: self.sum + other.sum,
            sum_sq: self.sum_sq + other.sum_sq,
        }
    }

    /// The mean, `None` for no scores.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }

    /// The population standard deviation, `None` for no scores.
    pub fn std_dev(&self) -> Option<f64> {
        let mean = self.mean()?;
        // Rounding can leave a tiny negative variance for equal scores.
        Some(
            (self.sum_sq / self.count as f64 - mean * mean)
                .max(0.0)
                .sqrt(),
        )
    }
}

/// A scored row. Greater means ranked higher: higher score, then lower row index.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    score: f32,
    row: usize,
}

impl Candidate {
    /// The score as a totally ordered key. Adding +0.0 turns -0.0 into +0.0 so the two tie (and
    /// fall back to the row index) as they would under `partial_cmp`; scores are never NaN
    /// because stored rows and queries are checked finite and unit length.
    fn key(self) -> f32 {
        self.score + 0.0
    }
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key()
            .total_cmp(&other.key())
            .then_with(|| other.row.cmp(&self.row))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Candidate {}

/// The best `k` candidates seen so far; the heap's top is the worst of them.
struct Best {
    k: usize,
    heap: BinaryHeap<Reverse<Candidate>>,
    moments: ScoreMoments,
}

impl Best {
    fn new(k: usize) -> Self {
        Self {
            k,
            // A huge `k` (e.g. "all rows") must not allocate up front.
            heap: BinaryHeap::with_capacity(k.min(SCORE_BLOCK_ROWS)),
            moments: ScoreMoments::default(),
        }
    }

    /// Cheap pre-check on the score alone: false only when `score` cannot enter (it is below
    /// the current worst). Equal scores pass and are settled by row index in `offer`.
    #[inline]
    fn admits(&self, score: f32) -> bool {
        self.heap.len() < self.k
            || self
                .heap
                .peek()
                .is_some_and(|worst| score + 0.0 >= worst.0.key())
    }

    fn offer(&mut self, candidate: Candidate) {
        if self.heap.len() < self.k {
            self.heap.push(Reverse(candidate));
        } else if let Some(mut worst) = self.heap.peek_mut()
            && candidate > worst.0
        {
            *worst = Reverse(candidate);
        }
    }

    fn merge(mut self, other: Best) -> Best {
        self.moments = self.moments.merge(other.moments);
        for Reverse(candidate) in other.heap {
            self.offer(candidate);
        }
        self
    }

    fn into_sorted(self) -> Vec<(usize, f32)> {
        // Ascending `Reverse` order is descending rank.
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|Reverse(c)| (c.row, c.score))
            .collect()
    }
}
