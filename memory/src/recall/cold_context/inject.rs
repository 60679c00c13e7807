//! The memory block in front of the model: the related entries that clear the floor, within
//! the memory budget, in a stable order so the prompt prefix caches.

use super::*;

/// First line of an injected memory block ("related memory").
pub const INJECT_HEADER: &str = "【相关记忆】";
/// Replies are cut to this many characters in an injected block (a query-focused excerpt).
const INJECT_RESPONSE_CHARS: usize = 160;
/// Inputs longer than this many characters are shown by a query-focused excerpt of this size:
/// a pasted document or a long message recalled whole would cost more prompt than the rest of
/// the memory block.
const INJECT_INPUT_CHARS: usize = 480;

/// What [`ColdContext::inject`] puts in front of the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Injection {
    /// The memory block (empty when nothing cleared the floor).
    pub block: String,
    /// The ids of the events in the block, in the block's (time) order.
    pub event_ids: Vec<String>,
    /// The recall hits the block is made of, in the same order: why each was chosen (its
    /// scores) for the record of what a turn was shown.
    pub recalled: Vec<Recalled>,
    /// The query was small talk ([`ColdContext::is_small_talk`]): nothing was recalled for it,
    /// and nothing else should be recalled by its words.
    pub small_talk: bool,
}

impl ColdContext {
    /// A block of the entries related to `query` for the prompt, within `memory_tokens`
    /// (`estimate_tokens` of the whole block). Only entries that clear the relevance floor are
    /// included, at most `inject_max_items`, best first until the budget is spent; the block
    /// lists them in time order with no scores, so it changes only when its members change.
    /// Empty when nothing clears the floor. The included entries count an access.
    pub fn auto_inject(
        &mut self,
        query: &str,
        memory_tokens: usize,
        now_ms: i64,
    ) -> Result<String, RecallError> {
        Ok(self.inject(query, memory_tokens, now_ms)?.block)
    }

    /// [`auto_inject`](Self::auto_inject) with the events the block holds: what the model is
    /// shown for `query`, and which archived events it is made of.
    pub fn inject(
        &mut self,
        query: &str,
        memory_tokens: usize,
        now_ms: i64,
    ) -> Result<Injection, RecallError> {
        let max_items = self.config.inject_max_items;
        if self.is_small_talk(query) {
            tracing::debug!("small talk: nothing recalled into the prompt");
            return Ok(Injection {
                small_talk: true,
                ..Injection::default()
            });
        }
        if memory_tokens == 0 || max_items == 0 {
            return Ok(Injection::default());
        }
        let hits = self.peek(query, max_items * 3, now_ms)?;
        let query_sparse = SparseEmbedder.vectorize(query);
        // Without a main vector for the entry (no model, or not embedded yet) it is judged by
        // words, as the keyword fallback would.
        let relevant = |hit: &Recalled| match hit.dense_cosine {
            Some(c) => c >= self.config.inject_min_cosine,
            None => {
                query_sparse.cosine(&SparseEmbedder.vectorize(&hit.text))
                    >= self.config.inject_min_sparse
            }
        };
        let mut left = memory_tokens.saturating_sub(estimate_tokens(INJECT_HEADER));
        let mut chosen: Vec<(&Recalled, String)> = Vec::new();
        let query_terms: HashSet<String> = query_tokens(query)
            .split(' ')
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect();
        for hit in hits.iter().filter(|h| relevant(h)) {
            if chosen.len() == max_items {
                break;
            }
            let line = self.inject_line(&hit.event, &query_terms);
            // The line and the line break before it.
            let cost = estimate_tokens(&line) + estimate_tokens("\n");
            if cost > left {
                continue;
            }
            left -= cost;
            chosen.push((hit, line));
        }
        if chosen.is_empty() {
            return Ok(Injection::default());
        }
        chosen.sort_by(|a, b| {
            (a.0.event.timestamp_ms, a.0.id).cmp(&(b.0.event.timestamp_ms, b.0.id))
        });
        let ids: Vec<i64> = chosen.iter().map(|c| c.0.id).collect();
        self.store.cold_touch(&ids, now_ms)?;
        let mut block = String::from(INJECT_HEADER);
        for (_, line) in &chosen {
            block.push('\n');
            block.push_str(line);
        }
        Ok(Injection {
            block,
            event_ids: chosen.iter().map(|c| c.0.event.id.clone()).collect(),
            recalled: chosen.iter().map(|c| c.0.clone()).collect(),
            small_talk: false,
        })
    }

    fn inject_line(&self, event: &ContextEvent, query_terms: &HashSet<String>) -> String {
        let mut line = format!(
            "[{}] {}: {}",
            format_minute(
                event.timestamp_ms,
                self.config.zone.offset_at(event.timestamp_ms),
            ),
            event.source,
            excerpt(&event.input, query_terms, INJECT_INPUT_CHARS)
        );
        if !event.response.is_empty() {
            if !event.input.is_empty() {
                line.push_str(" → ");
            }
            line.push_str(&excerpt(
                &event.response,
                query_terms,
                INJECT_RESPONSE_CHARS,
            ));
        }
        line
    }
}
