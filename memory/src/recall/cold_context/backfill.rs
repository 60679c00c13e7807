//! Vectors filled in idle time: entries a dense space has no vector for get one, a few at a
//! time, oldest first.
//!
//! An entry can lack a vector of the current main model for months: archived while no model
//! was installed or while it failed, or embedded by a model since replaced (its vectors carry
//! the old fingerprint and are never compared). Without one it is found by its keywords only,
//! never by meaning, and injected only when the words match. The companion's vectors are never
//! computed on the turn path at all. Both are caught up here, in idle time.

use super::*;

impl ColdContext {
    /// One idle step: up to `limit` entries without a vector of the main model (none, or one of
    /// another model) get one, then, when the main space has nothing left to fill, up to `limit`
    /// entries without a companion vector. Returns how many entries got a vector; 0 when none
    /// is missing, there is no model, or the models failed (logged once) — the caller stops
    /// asking until something new is archived.
    pub fn backfill(&mut self, limit: usize) -> Result<usize, RecallError> {
        match self.backfill_space(VectorColumn::Main, limit)? {
            0 => self.backfill_space(VectorColumn::Side, limit),
            done => Ok(done),
        }
    }

    /// [`backfill`](Self::backfill) for the main model alone.
    pub fn backfill_main(&mut self, limit: usize) -> Result<usize, RecallError> {
        self.backfill_space(VectorColumn::Main, limit)
    }

    /// [`backfill`](Self::backfill) for the companion alone: for a store that predates it, or
    /// an archive whose companion step failed or was deferred.
    pub fn backfill_companion(&mut self, limit: usize) -> Result<usize, RecallError> {
        self.backfill_space(VectorColumn::Side, limit)
    }

    fn backfill_space(&mut self, column: VectorColumn, limit: usize) -> Result<usize, RecallError> {
        let Some(space) = self.space(column) else {
            return Ok(0);
        };
        if limit == 0 {
            return Ok(0);
        }
        let (fp, after) = (space.fingerprint.clone(), space.backfilled_to);
        let missing = self
            .store
            .cold_unembedded_after(column, &fp, after, limit)?;
        let Some(&last) = missing.last() else {
            // Nothing after the cursor: the next step reads only what is archived from now on.
            let end = self.store.cold_last_id()?;
            if let Some(space) = self.space_mut(column) {
                space.backfilled_to = space.backfilled_to.max(end);
            }
            return Ok(0);
        };
        let mut entries = Vec::new();
        for &id in &missing {
            // Removed since the list was read: nothing to fill.
            let Some(entry) = self.store.cold_get(id)? else {
                continue;
            };
            let meta = EntryMeta::new(entry.event.timestamp_ms, &entry.event.source);
            entries.push((id, entry.text, meta));
        }
        let wanted = entries.len();
        let done = self.write_vectors(column, entries)?;
        // A model failure stores nothing: those entries stay ahead of the cursor.
        if done == wanted
            && let Some(space) = self.space_mut(column)
        {
            space.backfilled_to = last;
        }
        Ok(done)
    }

    /// Embeds `entries` (cold id, non-empty text, meta) in `column`'s space, stores the vectors
    /// in one transaction and adds them to its index when it is loaded. Returns how many were
    /// stored: 0 when there is no such space or the model failed (announced once; the entries
    /// stay listed for the back-fill).
    pub(super) fn write_vectors(
        &mut self,
        column: VectorColumn,
        entries: Vec<(i64, String, EntryMeta)>,
    ) -> Result<usize, RecallError> {
        let Some(space) = self.space(column) else {
            return Ok(0);
        };
        if entries.is_empty() {
            return Ok(0);
        }
        let texts: Vec<String> = entries.iter().map(|e| e.1.clone()).collect();
        let embedded = match space.embed_texts(&texts, self.config.passage_chars) {
            Ok(v) => v,
            Err(reason) => {
                match column {
                    VectorColumn::Main => self.announce_fallback(&reason),
                    VectorColumn::Side => self.announce_companion_failure(&reason),
                }
                return Ok(0);
            }
        };
        let fp = &space.fingerprint;
        let stored: Vec<(i64, Vec<f32>, EntryMeta)> = entries
            .into_iter()
            .zip(embedded)
            .filter_map(|((id, _, meta), v)| Some((id, v?, meta)))
            .collect();
        let updates: Vec<(i64, DenseVector)> = stored
            .iter()
            .map(|(id, v, _)| (*id, DenseVector::new(fp.clone(), v.clone())))
            .collect();
        self.store.cold_set_vectors(column, &updates)?;
        if let Some(space) = self.space_mut(column) {
            space.index_new(&stored);
        }
        Ok(stored.len())
    }

    /// Sends the back-fill of `column` back to `id` at the latest: entries there lost their
    /// vectors and the model gave none.
    pub(super) fn backfill_again_from(&mut self, column: VectorColumn, id: i64) {
        if let Some(space) = self.space_mut(column) {
            space.backfilled_to = space.backfilled_to.min(id - 1);
        }
    }

    fn space(&self, column: VectorColumn) -> Option<&DenseSpace> {
        match column {
            VectorColumn::Main => self.dense.as_ref(),
            VectorColumn::Side => self.companion.as_ref(),
        }
    }

    fn space_mut(&mut self, column: VectorColumn) -> Option<&mut DenseSpace> {
        match column {
            VectorColumn::Main => self.dense.as_mut(),
            VectorColumn::Side => self.companion.as_mut(),
        }
    }
}
