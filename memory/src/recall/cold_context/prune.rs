//! What the working window keeps for an input, and what goes to cold context.

use super::*;

/// What bounds the working window before each input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PruneSettings {
    /// `core.agent.max_context_size` (SPEC §4.7).
    pub max_context_size: usize,
    /// Configured protected count: the newest events never pruned.
    pub protected: usize,
    /// The turn's timeline budget, in estimated tokens.
    pub context_tokens: usize,
    /// The share of the limit a prune frees beyond it ([`PruneLimits::with_slack`]).
    pub slack: f64,
}

/// What a prune did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PruneOutcome {
    /// Window events left.
    pub kept: usize,
    /// Cold ids of the archived events, in time order.
    pub archived: Vec<i64>,
}

impl ColdContext {
    /// Prunes the window for `query` (SPEC §4.6 with Hearth's fixes, see [`crate::prune`]): keeps
    /// the last `protected` events and the `top_k − protected` most relevant others, moves the
    /// rest to cold context with their original timestamps. Small talk ranks nothing: the
    /// newest are kept, as for an empty query.
    pub fn prune(
        &mut self,
        query: &str,
        top_k: usize,
        protected: usize,
        now_ms: i64,
    ) -> Result<PruneOutcome, RecallError> {
        let (window, plan) = self.plan_window_prune(query, top_k, protected)?;
        if plan.is_noop() {
            return Ok(PruneOutcome {
                kept: window.len(),
                archived: Vec::new(),
            });
        }
        // A copy recalled from cold context is dropped (its original is still there), anything
        // else moves to cold context.
        let (copies, archive): (Vec<StoredEvent>, Vec<StoredEvent>) = plan
            .archive
            .iter()
            .map(|&i| window[i].clone())
            .partition(|e| e.record.event.id.starts_with(crate::RECALLED_PREFIX));
        if !copies.is_empty() {
            let ids: Vec<i64> = copies.iter().map(|e| e.id).collect();
            self.store.events_drop_recalled(&ids)?;
        }
        let archived = self.archive(&archive, "prune", now_ms)?;
        Ok(PruneOutcome {
            kept: plan.keep.len(),
            archived,
        })
    }

    /// The prune before an input (SPEC §4.7): when the window holds more events than its
    /// limits keep — from `max_context_size`, the `protected` count and the window's tokens
    /// against `context_tokens` ([`PruneLimits::compute`]) — it is pruned for `query` down to
    /// `slack` of its limit below ([`PruneLimits::with_slack`]). `None` while it is within.
    pub fn prune_past_limits(
        &mut self,
        query: &str,
        limits: PruneSettings,
        now_ms: i64,
    ) -> Result<Option<PruneOutcome>, RecallError> {
        let stats = self.store.events_stats()?;
        let keep = PruneLimits::compute(
            limits.max_context_size,
            limits.protected,
            limits.context_tokens,
            stats.tokens,
            stats.events as usize,
        );
        if stats.events as usize <= keep.top_k {
            return Ok(None);
        }
        let keep = keep.with_slack(limits.slack);
        self.prune(query, keep.top_k, keep.protected, now_ms)
            .map(Some)
    }

    /// The window events a [`prune`](Self::prune) for `query` would keep, in window order,
    /// without changing anything.
    pub fn prune_keeps(
        &mut self,
        query: &str,
        top_k: usize,
        protected: usize,
    ) -> Result<Vec<ContextEvent>, RecallError> {
        let (window, plan) = self.plan_window_prune(query, top_k, protected)?;
        if plan.is_noop() {
            return Ok(window.into_iter().map(|e| e.record.event).collect());
        }
        let mut keep = plan.keep;
        keep.sort_unstable();
        Ok(keep
            .into_iter()
            .map(|i| window[i].record.event.clone())
            .collect())
    }

    /// The window and the prune plan over it for `query`.
    fn plan_window_prune(
        &mut self,
        query: &str,
        top_k: usize,
        protected: usize,
    ) -> Result<(Vec<StoredEvent>, crate::PrunePlan), RecallError> {
        let window = self.store.events_window()?;
        // Small talk says nothing to rank the window by: the prune keeps the newest, as for
        // an empty query, instead of the history's other greetings.
        let query = if self.is_small_talk(query) { "" } else { query };
        let query_dense = if query.trim().is_empty() {
            None
        } else {
            self.embed_query(query)
        };
        let query_sparse = SparseEmbedder.vectorize(query);
        // Sparse vectors of events without a usable dense vector: stored ones, else computed.
        let sparse: Vec<Option<SparseVector>> = window
            .iter()
            .map(|e| {
                let dense_ok = e.record.dense.as_ref().is_some_and(|d| {
                    Some(d.fingerprint.as_str()) == self.fingerprint()
                        && query_dense
                            .as_ref()
                            .is_some_and(|q| q.len() == d.values.len())
                });
                if dense_ok {
                    return None;
                }
                e.record
                    .sparse
                    .as_deref()
                    .and_then(|json| serde_json::from_str(json).ok())
                    .or_else(|| {
                        let text = self.text_for(&e.record.event);
                        (!text.is_empty()).then(|| SparseEmbedder.vectorize(&text))
                    })
            })
            .collect();
        let events: Vec<PruneEvent<'_>> = window
            .iter()
            .zip(&sparse)
            .map(|(e, s)| PruneEvent {
                timestamp_ms: e.record.event.timestamp_ms,
                dense: e.record.dense.as_ref().map(|d| DenseRef {
                    fingerprint: &d.fingerprint,
                    values: &d.values,
                }),
                sparse: s.as_ref(),
            })
            .collect();
        let fp = self.fingerprint().unwrap_or_default().to_owned();
        let prune_query = PruneQuery {
            dense: query_dense.as_deref().map(|values| DenseRef {
                fingerprint: &fp,
                values,
            }),
            sparse: Some(&query_sparse),
        };
        let plan = plan_prune(&events, &prune_query, top_k, protected);
        drop(events);
        Ok((window, plan))
    }
}
