//! The in-memory copy of cold context's dense vectors for one fingerprint: one contiguous
//! [`QuantMatrix`] (a byte per component, `simd::quant`) scanned by the SIMD kernel, with a row →
//! cold id map. Loaded once from the store
//! (the main `dense` column or a side space's table), then kept current by the cold context as
//! it archives; vectors of any other fingerprint are never loaded, so they can never be scored.

use std::collections::HashMap;

use crate::recall::entry_meta::EntryMeta;
use crate::simd::{Kernel, QuantMatrix, ScoreMoments, SimdError, TopK};
use crate::store::VectorColumn;
use crate::{StoreError, StoreReader};

/// A dense hit: cold id, cosine to the query, the entry's meta.
pub(crate) type DenseHit = (i64, f32, EntryMeta);

#[derive(Debug)]
pub(crate) struct DenseIndex {
    fingerprint: String,
    matrix: QuantMatrix,
    ids: Vec<i64>,
    meta: Vec<EntryMeta>,
    rows: HashMap<i64, usize>,
}

impl DenseIndex {
    pub(crate) fn new(fingerprint: &str, dim: usize) -> Self {
        Self {
            fingerprint: fingerprint.to_owned(),
            matrix: QuantMatrix::new(dim),
            ids: Vec::new(),
            meta: Vec::new(),
            rows: HashMap::new(),
        }
    }

    /// Every vector of `fingerprint` in cold context, read from `column`. Vectors of the wrong
    /// width (a damaged row: the fingerprint names the width) are skipped and counted in the
    /// returned number.
    pub(crate) fn load(
        store: &StoreReader,
        column: VectorColumn,
        fingerprint: &str,
        dim: usize,
    ) -> Result<(Self, usize), StoreError> {
        let mut index = Self::new(fingerprint, dim);
        let mut skipped = 0;
        for row in store.vectors_in(column, fingerprint) {
            let row = row?;
            let meta = EntryMeta::new(row.timestamp_ms, &row.source);
            if index.insert(row.id, &row.values, meta).is_err() {
                skipped += 1;
            }
        }
        Ok((index, skipped))
    }

    pub(crate) fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Adds (or replaces) the vector of cold entry `id`.
    pub(crate) fn insert(
        &mut self,
        id: i64,
        values: &[f32],
        meta: EntryMeta,
    ) -> Result<(), SimdError> {
        if self.rows.contains_key(&id) {
            self.remove(id);
        }
        let row = self.matrix.push(values)?;
        self.ids.push(id);
        self.meta.push(meta);
        self.rows.insert(id, row);
        Ok(())
    }

    /// Forgets cold entry `id` (it was removed from the store).
    pub(crate) fn remove(&mut self, id: i64) {
        let Some(row) = self.rows.remove(&id) else {
            return;
        };
        if let Some(moved_from) = self.matrix.swap_remove(row) {
            self.rows.insert(self.ids[moved_from], row);
        }
        self.ids.swap_remove(row);
        self.meta.swap_remove(row);
    }

    /// What recall weighs about `id` besides its vector, when `id` has a vector here.
    pub(crate) fn meta(&self, id: i64) -> Option<EntryMeta> {
        self.rows.get(&id).map(|&row| self.meta[row])
    }

    /// The cosine of `id`'s stored vector with the unit vector `query`, as a search scores it
    /// (`None` when `id` has no vector here or `query` has another width).
    pub(crate) fn score(&self, id: i64, query: &[f32]) -> Option<f32> {
        let row = *self.rows.get(&id)?;
        self.matrix.score(Kernel::best(), row, query)
    }

    /// The `k` entries most similar to `query` among those `keep` admits, best first, and the
    /// moments of every entry's cosine. Serial: a recall runs on one service thread and must
    /// not wake the pool for a few thousand rows.
    pub(crate) fn search(
        &self,
        query: &[f32],
        k: usize,
        keep: impl Fn(&EntryMeta) -> bool + Sync,
    ) -> Result<(Vec<DenseHit>, ScoreMoments), SimdError> {
        let scan = TopK::new().parallel_min_rows(usize::MAX).scan_where(
            &self.matrix,
            query,
            k,
            |row| keep(&self.meta[row]),
        )?;
        Ok((self.hits(scan.hits), scan.moments))
    }

    /// As [`DenseIndex::search`], and from the same pass the best `k` of the kept entries that
    /// `within` also takes.
    pub(crate) fn search_within(
        &self,
        query: &[f32],
        k: usize,
        keep: impl Fn(&EntryMeta) -> bool + Sync,
        within: impl Fn(&EntryMeta) -> bool + Sync,
    ) -> Result<(Vec<DenseHit>, Vec<DenseHit>, ScoreMoments), SimdError> {
        let (scan, inside) = TopK::new()
            .parallel_min_rows(usize::MAX)
            .scan_where_within(
                &self.matrix,
                query,
                k,
                |row| keep(&self.meta[row]),
                |row| within(&self.meta[row]),
            )?;
        Ok((self.hits(scan.hits), self.hits(inside), scan.moments))
    }

    fn hits(&self, rows: Vec<(usize, f32)>) -> Vec<DenseHit> {
        rows.into_iter()
            .map(|(row, score)| (self.ids[row], score, self.meta[row]))
            .collect()
    }
}
