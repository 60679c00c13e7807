//! The in-memory copy of cold context's dense vectors for one fingerprint: one contiguous
//! [`Matrix`] scanned by the SIMD kernel, with a row → cold id map. Loaded once from the store,
//! then kept current by the cold context as it archives; vectors of any other fingerprint are
//! never loaded, so they can never be scored.

use std::collections::HashMap;

use crate::simd::{Matrix, SimdError, TopK};
use crate::{StoreError, StoreReader};

#[derive(Debug)]
pub(crate) struct DenseIndex {
    fingerprint: String,
    matrix: Matrix,
    ids: Vec<i64>,
    rows: HashMap<i64, usize>,
}

impl DenseIndex {
    pub(crate) fn new(fingerprint: &str, dim: usize) -> Self {
        Self {
            fingerprint: fingerprint.to_owned(),
            matrix: Matrix::new(dim),
            ids: Vec::new(),
            rows: HashMap::new(),
        }
    }

    /// Every vector of `fingerprint` in cold context. Vectors of the wrong width (a damaged row:
    /// the fingerprint names the width) are skipped and counted in the returned number.
    pub(crate) fn load(
        store: &StoreReader,
        fingerprint: &str,
        dim: usize,
    ) -> Result<(Self, usize), StoreError> {
        let mut index = Self::new(fingerprint, dim);
        let mut skipped = 0;
        for row in store.cold_vectors(fingerprint) {
            let (id, values) = row?;
            if index.insert(id, &values).is_err() {
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
    pub(crate) fn insert(&mut self, id: i64, values: &[f32]) -> Result<(), SimdError> {
        if self.rows.contains_key(&id) {
            self.remove(id);
        }
        let row = self.matrix.push(values)?;
        self.ids.push(id);
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
    }

    /// The stored unit vector of `id`.
    pub(crate) fn vector(&self, id: i64) -> Option<&[f32]> {
        self.rows.get(&id).and_then(|&row| self.matrix.get(row))
    }

    /// The `k` entries most similar to `query`, `(cold id, cosine)` best first. Serial: a recall
    /// runs on one service thread and must not wake the pool for a few thousand rows.
    pub(crate) fn search(&self, query: &[f32], k: usize) -> Result<Vec<(i64, f32)>, SimdError> {
        let hits = TopK::new()
            .parallel_min_rows(usize::MAX)
            .run(&self.matrix, query, k)?;
        Ok(hits
            .into_iter()
            .map(|(row, score)| (self.ids[row], score))
            .collect())
    }
}
