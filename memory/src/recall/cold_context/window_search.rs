//! The turns still in the working window that a query names by its words. A person who wants to
//! take back what they said minutes ago looks for it here: until a prune moves a turn to cold
//! context, recall (and the `c` ids it gives) cannot find it.

use super::*;
use crate::recall::terms::search_terms;

/// A window event a query's words match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowHit {
    /// The window row id (`w12` to the user).
    pub id: i64,
    /// When it was said (Unix ms).
    pub at_ms: i64,
    /// Its words: the input, then the reply, a line apart.
    pub text: String,
    /// How many of the query's distinct terms it holds.
    pub matched: usize,
}

impl ColdContext {
    /// The window events holding any of `query`'s terms (keyword terms, question words left
    /// out), most terms first, then the newest; at most `k`. Reads only. Every event is read:
    /// the window is bounded by its token budget.
    pub fn search_window(&self, query: &str, k: usize) -> Result<Vec<WindowHit>, RecallError> {
        let wanted = query_tokens(query);
        let terms: HashSet<&str> = wanted.split(' ').filter(|t| !t.is_empty()).collect();
        if terms.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let mut hits: Vec<(WindowHit, String)> = Vec::new();
        for stored in self.store.events_window()? {
            let event = &stored.record.event;
            let text = [event.input.trim(), event.response.trim()]
                .into_iter()
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n");
            let own: HashSet<String> = search_terms(&text).into_iter().collect();
            let matched = terms.iter().filter(|t| own.contains(**t)).count();
            if matched > 0 {
                let hit = WindowHit {
                    id: stored.id,
                    at_ms: event.timestamp_ms,
                    text,
                    matched,
                };
                hits.push((hit, event.id.clone()));
            }
        }
        hits.sort_by_key(|(h, _)| std::cmp::Reverse((h.matched, h.at_ms, h.id)));
        // A turn is in the window twice (its input, then with its reply): listed once, by the
        // event that holds the most of it, the answered one. Either forgets the whole turn.
        let mut turns = HashSet::new();
        Ok(hits
            .into_iter()
            .filter(|(_, turn)| turn.is_empty() || turns.insert(turn.clone()))
            .map(|(hit, _)| hit)
            .take(k)
            .collect())
    }
}
