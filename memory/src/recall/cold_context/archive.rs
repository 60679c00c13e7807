//! Window events into cold context, with their search text, keyword terms and vectors.

use super::*;

impl ColdContext {
    /// Moves window events to cold context in one transaction, with their original timestamps,
    /// search text and keyword terms. Entries whose window row had no vector in the current
    /// dense space get one afterwards (a second transaction; if that fails the entries are still
    /// archived and keyword-searchable, and [`backfill`](Self::backfill) embeds them later).
    /// With a companion, every entry with text gets a vector of its space too (a third
    /// transaction, same rule). Returns the cold ids in the order of
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
            if let Err(err) = self.write_vectors(VectorColumn::Side, entries) {
                tracing::warn!(
                    %err,
                    entries = events.len(),
                    "archived without companion vectors, left for a back-fill"
                );
            }
        }
        Ok(ids)
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
