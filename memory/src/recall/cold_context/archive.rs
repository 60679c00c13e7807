//! Window events into cold context, with their search text, keyword terms and vectors; and the
//! companion model's vectors filled in idle time.

use super::*;

impl ColdContext {
    /// Moves window events to cold context in one transaction, with their original timestamps,
    /// search text and keyword terms. Entries whose window row had no vector in the current
    /// dense space get one afterwards (a second transaction; if that fails the entries are still
    /// archived and keyword-searchable, and `cold_stale_vectors` lists them for a back-fill).
    /// With a companion, every entry with text gets a vector of its space too (a third
    /// transaction, same rule: on failure `cold_side_missing` lists them for
    /// [`backfill_companion`](Self::backfill_companion)). Returns the cold ids in the order of
    /// `events`.
    pub fn archive(
        &mut self,
        events: &[StoredEvent],
        archived_from: &str,
        now_ms: i64,
    ) -> Result<Vec<i64>, RecallError> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let texts: Vec<String> = events
            .iter()
            .map(|e| self.text_for(&e.record.event))
            .collect();
        let moves: Vec<ColdMove> = events
            .iter()
            .zip(&texts)
            .map(|(e, text)| ColdMove {
                event_id: e.id,
                text: text.clone(),
                tokens: index_tokens(text),
            })
            .collect();
        let ids = self.store.move_to_cold(&moves, archived_from, now_ms)?;
        let metas: Vec<EntryMeta> = events
            .iter()
            .map(|e| EntryMeta::new(e.record.event.timestamp_ms, &e.record.event.source))
            .collect();
        if let Some(speakers) = self.speakers.as_mut() {
            for e in events {
                speakers.add_source(&e.record.event.source);
            }
        }

        let fingerprint = self.fingerprint().map(str::to_owned);
        let current = |e: &StoredEvent| -> Option<Vec<f32>> {
            let dense = e.record.dense.as_ref()?;
            (Some(&dense.fingerprint) == fingerprint.as_ref()).then(|| dense.values.clone())
        };
        let mut vectors: Vec<Option<Vec<f32>>> = events.iter().map(current).collect();
        let missing: Vec<usize> = (0..events.len())
            .filter(|&i| vectors[i].is_none() && !texts[i].is_empty())
            .collect();
        if let Some(fp) = &fingerprint
            && !missing.is_empty()
        {
            let missing_texts: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
            let embedded = self.embed_texts(&missing_texts);
            let mut updates = Vec::new();
            for (&i, v) in missing.iter().zip(embedded) {
                if let Some(v) = v {
                    updates.push((ids[i], DenseVector::new(fp.clone(), v.clone())));
                    vectors[i] = Some(v);
                }
            }
            if let Err(err) = self.store.cold_set_dense(&updates) {
                tracing::warn!(%err, entries = updates.len(), "archived without dense vectors");
                for &i in &missing {
                    vectors[i] = None;
                }
            }
        }
        if let Some(space) = self.dense.as_mut() {
            let stored: Vec<(i64, Vec<f32>, EntryMeta)> = ids
                .iter()
                .zip(vectors)
                .zip(&metas)
                .filter_map(|((&id, v), &meta)| Some((id, v?, meta)))
                .collect();
            space.index_new(&stored);
        }

        if self.companion.is_some() && !self.companion_deferred {
            let entries: Vec<(i64, String, EntryMeta)> = ids
                .iter()
                .zip(texts)
                .zip(metas)
                .filter(|((_, text), _)| !text.is_empty())
                .map(|((&id, text), meta)| (id, text, meta))
                .collect();
            if let Err(err) = self.write_companion(entries) {
                tracing::warn!(
                    %err,
                    entries = events.len(),
                    "archived without companion vectors, left for a back-fill"
                );
            }
        }
        Ok(ids)
    }

    /// Gives up to `limit` cold entries without a companion vector one (oldest first): for a
    /// store that predates the companion, or an archive whose companion step failed. Meant for
    /// idle time. Returns how many entries got a vector; 0 when none is missing, there is no
    /// companion, or it failed (logged once).
    pub fn backfill_companion(&mut self, limit: usize) -> Result<usize, RecallError> {
        let Some(fp) = self.companion_fingerprint().map(str::to_owned) else {
            return Ok(0);
        };
        if limit == 0 {
            return Ok(0);
        }
        let missing =
            self.store
                .cold_side_missing_after(&fp, self.companion_backfilled_to, limit)?;
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
        let done = self.write_companion(entries)?;
        // A model failure stores nothing: those entries stay ahead of the cursor.
        if done == wanted
            && let Some(&last) = missing.last()
        {
            self.companion_backfilled_to = last;
        }
        Ok(done)
    }

    /// Embeds `entries` (cold id, non-empty text, meta) with the companion, stores the vectors
    /// in one transaction and adds them to its index when it is loaded. Returns how many were
    /// stored: 0 when the model failed (announced once; the entries stay listed as missing).
    pub(super) fn write_companion(
        &mut self,
        entries: Vec<(i64, String, EntryMeta)>,
    ) -> Result<usize, RecallError> {
        let Some(space) = self.companion.as_ref() else {
            return Ok(0);
        };
        if entries.is_empty() {
            return Ok(0);
        }
        let texts: Vec<String> = entries.iter().map(|e| e.1.clone()).collect();
        let embedded = match space.embed_texts(&texts, self.config.passage_chars) {
            Ok(v) => v,
            Err(reason) => {
                self.announce_companion_failure(&reason);
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
        self.store.cold_set_side_dense(&updates)?;
        if let Some(space) = self.companion.as_mut() {
            space.index_new(&stored);
        }
        Ok(stored.len())
    }

    /// Archives events that were never in the window (an import, a benchmark corpus) by the same
    /// path as a prune: appended to the window, then moved to cold context. Two transactions;
    /// a crash between them leaves the events in the window, never loses them.
    pub fn archive_events(
        &mut self,
        events: Vec<ContextEvent>,
        archived_from: &str,
        now_ms: i64,
    ) -> Result<Vec<i64>, RecallError> {
        let stored = self.append(events)?;
        self.archive(&stored, archived_from, now_ms)
    }
}
