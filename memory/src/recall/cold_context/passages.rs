//! A fourth list, measured and not a default: the person's long entries cut into passages, each
//! embedded by the main model, an entry scored by its best passage. A fact said in passing in a
//! long message ("…by the way, I just did the Walk for Hunger charity event today") is diluted
//! in the whole turn's vector; its own passage is not. Held in memory only, built on demand
//! (`hearth bench recall --passage-list CHARS`): the daemon does not build it, and archive,
//! forget and redact do not keep it current — it is a measurement's snapshot (an entry removed
//! since is skipped by recall, as any vanished entry is).

use super::dense_space::{DenseList, EMBED_BATCH, population_of, split_passages};
use super::*;
use crate::recall::entry_meta::Speaker;
use crate::recall::fusion::expected_best_of;

/// The passages of the person's long entries in the main model's space.
pub(super) struct PassageIndex {
    /// Rows keyed by passage number; each row carries its entry's meta.
    index: DenseIndex,
    /// Passage number → the cold entry it was cut from.
    entry_of: Vec<i64>,
    /// How many passages each entry was cut into.
    cut_into: HashMap<i64, usize>,
}

impl PassageIndex {
    /// The `depth` entries whose best passage is nearest `query` among those the priors
    /// admit, best first, and the distribution of every passage's cosine. An entry is scored
    /// by its best passage's cosine less what chance gives the best of its passages
    /// ([`expected_best_of`] deviations of the passages' spread): an entry cut into ten
    /// passages draws ten times, and without the correction long turns won by number.
    pub(super) fn search(
        &self,
        query: &[f32],
        depth: usize,
        priors: &QueryPriors,
    ) -> Result<DenseList, RecallError> {
        let admits = |m: &EntryMeta| priors.admits(m.timestamp_ms);
        // Several passages of one entry may lead: read deeper than `depth` entries.
        let (hits, moments) = self.index.search(query, depth.saturating_mul(4), admits)?;
        let spread = moments.std_dev().unwrap_or(0.0);
        let mut seen = HashSet::new();
        let mut hits: Vec<DenseHit> = hits
            .into_iter()
            .filter_map(|(passage, cosine, meta)| {
                let entry = *self.entry_of.get(usize::try_from(passage).ok()?)?;
                let draws = self.cut_into.get(&entry).copied().unwrap_or(1);
                let chance = spread * expected_best_of(draws);
                seen.insert(entry)
                    .then_some((entry, cosine - chance as f32, meta))
            })
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1));
        hits.truncate(depth);
        Ok(DenseList {
            hits,
            population: population_of(&moments),
        })
    }
}

impl ColdContext {
    /// Builds the passage list: every entry of the person (not the agent's replies) longer
    /// than one passage of `max_chars` is cut into passages and each embedded by the main
    /// model. Returns how many passages were embedded (0 without a model).
    pub fn index_passages(&mut self, max_chars: usize) -> Result<usize, RecallError> {
        self.ensure_indexes()?;
        let Some(space) = self.dense.as_ref() else {
            return Ok(0);
        };
        let Some(main) = space.index.as_ref() else {
            return Ok(0);
        };
        let mut index = DenseIndex::new(&space.fingerprint, space.embedder.dim());
        let mut entry_of = Vec::new();
        let mut pending: Vec<(i64, EntryMeta, String)> = Vec::new();
        for entry in self.store.cold_entries() {
            let entry = entry?;
            let Some(meta) = main.meta(entry.id).filter(|m| m.speaker == Speaker::User) else {
                continue;
            };
            let passages = split_passages(&entry.text, max_chars);
            if passages.len() > 1 {
                pending.extend(passages.into_iter().map(|p| (entry.id, meta, p.to_owned())));
            }
        }
        for chunk in pending.chunks(EMBED_BATCH) {
            let texts: Vec<&str> = chunk.iter().map(|p| p.2.as_str()).collect();
            let vectors = match space.embedder.embed_batch(&texts) {
                Ok(v) => v,
                Err(err) => {
                    // Measured as far as the model went: the list holds what was embedded.
                    tracing::warn!(%err, "passage list left incomplete");
                    break;
                }
            };
            for ((id, meta, _), v) in chunk.iter().zip(vectors) {
                if index.insert(entry_of.len() as i64, &v, *meta).is_ok() {
                    entry_of.push(*id);
                }
            }
        }
        let embedded = entry_of.len();
        let mut cut_into = HashMap::new();
        for &entry in &entry_of {
            *cut_into.entry(entry).or_insert(0) += 1;
        }
        self.passages = Some(PassageIndex {
            index,
            entry_of,
            cut_into,
        });
        Ok(embedded)
    }
}
