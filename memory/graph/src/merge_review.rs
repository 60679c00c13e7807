//! Merge review by the model (SPEC §5.7 `detectEntityMerge`): the pairs of names
//! [`GraphStore::merge_candidates`] proposes are put to the model as a consolidation task, and
//! its answer decides each pair — the same one (merged) or different ones (remembered apart).
//!
//! Only the proposed pairs can be merged, whatever the answer says; a pair the answer does not
//! decide is kept apart like a "different" one (for the same rounds), so an undecided pair
//! does not cost a model call on every tick.

use crate::{GraphError, GraphStore, MergeCandidate};

/// What the model decided of one pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeDecision {
    /// The two names mean the same person or thing.
    Same,
    /// They do not, or the answer did not say.
    Different,
}

/// What settling one review did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeReview {
    /// Pairs merged (source into target).
    pub merged: Vec<(String, String)>,
    /// Pairs remembered apart.
    pub kept_apart: usize,
}

/// The consolidation task's text for `pairs` (numbered from 1).
pub fn merge_prompt(pairs: &[MergeCandidate]) -> String {
    let mut out = String::from(
        "Memory consolidation task. Each numbered line below is a pair of names from the \
         user's memory that look alike. Decide for each pair whether both names mean the same \
         person, place or thing. Answer one line per pair and nothing else, as: \
         number | same   or   number | different\n\
         When unsure, answer different. Do not call tools.\n\nPairs:\n",
    );
    for (i, pair) in pairs.iter().enumerate() {
        out.push_str(&format!("{}: {} / {}\n", i + 1, pair.source, pair.target));
    }
    out
}

/// Reads the answer to [`merge_prompt`] for `count` pairs: a decision per pair, `Different`
/// for every pair the answer does not decide clearly.
pub fn parse_merge_answer(answer: &str, count: usize) -> Vec<MergeDecision> {
    let mut out = vec![MergeDecision::Different; count];
    let mut seen = vec![false; count];
    for line in answer.lines() {
        let mut parts = line
            .trim()
            .trim_start_matches(['-', '*'])
            .split(['|', ':'])
            .map(str::trim);
        let (Some(n), Some(word)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Some(i) = n.parse::<usize>().ok().and_then(|n| n.checked_sub(1)) else {
            continue;
        };
        if i >= count || seen[i] {
            // A second, contradicting line for a pair leaves the first word standing.
            continue;
        }
        let word = word.trim_matches(['.', '"', '*']).to_lowercase();
        let decision = match word.as_str() {
            "same" | "yes" | "same one" | "相同" | "同一个" => MergeDecision::Same,
            "different" | "no" | "不同" => MergeDecision::Different,
            _ => continue,
        };
        seen[i] = true;
        out[i] = decision;
    }
    out
}

impl GraphStore {
    /// Applies the model's `decisions` on `pairs`: merges the same ones, remembers the others
    /// apart. A pair whose names no longer exist (merged or forgotten meanwhile) is skipped.
    pub fn settle_merges(
        &mut self,
        pairs: &[MergeCandidate],
        decisions: &[MergeDecision],
    ) -> Result<MergeReview, GraphError> {
        let mut review = MergeReview::default();
        for (pair, decision) in pairs.iter().zip(decisions) {
            match decision {
                MergeDecision::Same => match self.merge_entities(&pair.source, &pair.target) {
                    Ok(_) => review
                        .merged
                        .push((pair.source.clone(), pair.target.clone())),
                    Err(GraphError::NotFound { .. } | GraphError::InvalidName { .. }) => {}
                    Err(e) => return Err(e),
                },
                MergeDecision::Different => {
                    self.reject_merge(&pair.source, &pair.target)?;
                    review.kept_apart += 1;
                }
            }
        }
        Ok(review)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_read_per_pair_and_undecided_ones_are_different() {
        use MergeDecision::{Different, Same};
        let answer = "Sure.\n1 | same\n- 2: Different.\n3 | maybe\n1 | different\n9 | same\n";
        assert_eq!(
            parse_merge_answer(answer, 4),
            [Same, Different, Different, Different]
        );
        assert_eq!(parse_merge_answer("", 2), [Different, Different]);
    }

    #[test]
    fn the_prompt_lists_the_pairs() {
        let pair = MergeCandidate {
            source: "New York Cityy".into(),
            target: "New York City".into(),
            similarity: 0.9,
        };
        let prompt = merge_prompt(&[pair]);
        assert!(
            prompt.contains("\n1: New York Cityy / New York City\n"),
            "{prompt}"
        );
    }
}
