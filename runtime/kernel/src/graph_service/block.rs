//! The indexer's block: the facts related to a turn and to its scenes, within the memory
//! budget, in the prompt after the cold-recall block.

use super::*;

/// A block of facts for the prompt, and which facts it shows: what a reply given with it was
/// shown, so that forgetting one of them reaches that reply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FactsBlock {
    /// The block's text: a header and a line per fact ("" when no fact fits).
    pub text: String,
    /// The facts of its lines, in block order.
    pub shown: Vec<FactId>,
}

impl FactsBlock {
    /// Whether the block shows no fact.
    pub fn is_empty(&self) -> bool {
        self.shown.is_empty()
    }
}

impl GraphMemory {
    /// The text of the block of a turn with no scene.
    #[cfg(test)]
    pub(crate) fn block(&self, query: &str, budget: usize, now_ms: i64) -> String {
        self.block_in(query, None, budget, now_ms).text
    }

    /// The indexer's block for `query`: related facts within `budget` tokens, in a stable
    /// order (by id) so an unchanged graph gives the same bytes and the prefix caches. Facts
    /// the model fetched with `memory_recall` are left out.
    ///
    /// For a turn in `scene`, the facts of its scenes (by key, then of
    /// the emergent scenes its situation resembles; at most [`INDEXER_FACTS`]) come first under
    /// [`SCENE_FACTS_HEADER`], then the query's other facts under the block's usual header,
    /// all within `budget`, each part sorted by id. Without a scene, or when its scenes hold
    /// no fact, it is exactly the block without one.
    pub(crate) fn block_in(
        &self,
        query: &str,
        scene: Option<&SceneNow>,
        budget: usize,
        now_ms: i64,
    ) -> FactsBlock {
        if query.trim().is_empty() {
            return FactsBlock::default();
        }
        self.block_of(Some(query), scene, budget, now_ms)
    }

    /// The block of a small-talk turn: its scenes' facts alone, since its words ask for
    /// nothing (a greeting's words would match facts told with a greeting).
    pub(crate) fn scene_block_in(
        &self,
        scene: Option<&SceneNow>,
        budget: usize,
        now_ms: i64,
    ) -> FactsBlock {
        self.block_of(None, scene, budget, now_ms)
    }

    /// The block of the facts `query` recalls (none without one) and the scene's, within
    /// `budget`.
    fn block_of(
        &self,
        query: Option<&str>,
        scene: Option<&SceneNow>,
        budget: usize,
        now_ms: i64,
    ) -> FactsBlock {
        let Some(graph) = self.store.as_ref() else {
            return FactsBlock::default();
        };
        if budget == 0 {
            return FactsBlock::default();
        }
        let recalled = query.map_or(Ok(Vec::new()), |q| {
            graph.recall_with(q, now_ms, INDEXER_FACTS, INDEXER_LIMITS)
        });
        let mut hits = match recalled {
            Ok(hits) => hits,
            Err(e) => {
                tracing::warn!("graph recall for the prompt failed: {e}");
                return FactsBlock::default();
            }
        };
        hits.retain(|h| !self.recalled_set.contains(&h.id));
        let mut here = scene
            .map(|s| self.scene_hits(s, now_ms))
            .unwrap_or_default();
        let zone = graph.zone();
        if here.is_empty() {
            return facts_block(&mut hits, budget, zone);
        }
        let seen: HashSet<FactId> = here.iter().map(|h| h.id).collect();
        hits.retain(|h| !seen.contains(&h.id));
        let first = titled_block(SCENE_FACTS_HEADER, &mut here, budget, zone);
        // The newline between the two parts is paid for too.
        let joint = if first.is_empty() {
            0
        } else {
            estimate_tokens("\n")
        };
        let left = budget.saturating_sub(estimate_tokens(&first.text) + joint);
        let rest = facts_block(&mut hits, left, zone);
        match (first.is_empty(), rest.is_empty()) {
            (_, true) => first,
            (true, false) => rest,
            (false, false) => FactsBlock {
                text: format!("{}\n{}", first.text, rest.text),
                shown: first.shown.into_iter().chain(rest.shown).collect(),
            },
        }
    }

    /// The open facts of a turn's scenes, heaviest ref first, each once, at most
    /// [`INDEXER_FACTS`], without those the model fetched itself.
    fn scene_hits(&self, scene: &SceneNow, now_ms: i64) -> Vec<FactHit> {
        let Some(graph) = self.store.as_ref() else {
            return Vec::new();
        };
        let keys: Vec<&str> = scene.keys.iter().map(String::as_str).collect();
        match graph.scene_facts(&keys, &scene.features, INDEXER_FACTS, now_ms) {
            Ok(mut found) => {
                found.retain(|hit| !self.recalled_set.contains(&hit.id));
                found.truncate(INDEXER_FACTS);
                found
            }
            Err(e) => {
                tracing::warn!("graph recall by scene failed: {e}");
                Vec::new()
            }
        }
    }
}

/// The day `ms` falls on where the user is (`zone`, as it was then): an event of their Monday
/// is shown as Monday, wherever UTC's midnight falls.
fn day(ms: i64, zone: &LocalZone) -> String {
    hearth_memory::format_minute(ms, zone.offset_at(ms))
        .split(' ')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The indexer's block of `hits` within `budget` tokens: `Known facts (from memory):` and a
/// line per fact, sorted by id so an unchanged graph gives the same bytes and the prompt
/// prefix caches; empty when no fact fits. Days are the user's (`zone`). Also what
/// `hearth bench recall --graph` counts.
pub fn facts_block(hits: &mut [FactHit], budget: usize, zone: &LocalZone) -> FactsBlock {
    titled_block(FACTS_HEADER, hits, budget, zone)
}

/// `header` and a line per fact of `hits` that fits `budget` tokens, sorted by id; empty when
/// none fits.
fn titled_block(header: &str, hits: &mut [FactHit], budget: usize, zone: &LocalZone) -> FactsBlock {
    hits.sort_by_key(|h| h.id);
    let mut out = FactsBlock {
        text: String::from(header),
        shown: Vec::new(),
    };
    let mut used = estimate_tokens(header);
    for hit in hits.iter() {
        let line = format!("\n- {}", fact_line(hit, zone));
        let cost = estimate_tokens(&line);
        if used + cost > budget {
            continue;
        }
        used += cost;
        out.text.push_str(&line);
        out.shown.push(hit.id);
    }
    if out.is_empty() {
        FactsBlock::default()
    } else {
        out
    }
}

/// One fact as the prompt shows it: `[r3] user lives_in Lisbon (current, since 2026-11-20)`,
/// its days in the user's `zone`.
pub(super) fn fact_line(hit: &FactHit, zone: &LocalZone) -> String {
    let day = |ms| day(ms, zone);
    let when = match (hit.status, hit.valid_to_ms) {
        (FactStatus::Past, Some(to)) => {
            format!("past, {} – {}", day(hit.valid_from_ms), day(to))
        }
        (FactStatus::Event, _) => format!("event, {}", day(hit.valid_from_ms)),
        _ => format!("current, since {}", day(hit.valid_from_ms)),
    };
    format!(
        "[{}] {} {} {} ({when})",
        hit.id, hit.subject, hit.predicate, hit.object
    )
}
