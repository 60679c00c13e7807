//! The distillation benchmark (`hearth bench distill`): how many of the facts a careful reader
//! takes from what a user said each distiller finds, and how many it invents.
//!
//! A `hearth-facts/1` file holds sentences and their labelled `(subject, predicate, object)`
//! facts. The rule distiller (rules and the clause extractor, as the daemon's heartbeat runs it)
//! is scored on every sentence; the model distiller's prompt is sent for batches of sentences
//! exactly as the kernel's consolidation task builds it ([`model_prompt`]), its answer read and
//! grounded by the same [`parse_model_answer`], and scored alone and together with the rules
//! (what the graph holds when both have run). A fact counts when subject, predicate and object
//! match a label exactly, ignoring case: a synonym predicate is a miss and an invention, which
//! is strict, and the same for every distiller.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::Statement;
use crate::distill::{
    ColdItem, Distiller, MODEL_BATCH, RuleDistiller, model_prompt, parse_model_answer,
};

/// The labelled set shipped with the project.
const SHIPPED: &str = include_str!("../tests/fixtures/labelled_facts.json");

/// The one format version this loader reads.
pub const FACTS_FORMAT: &str = "hearth-facts/1";

/// Why a labelled set could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FactsFileError {
    /// The file could not be read.
    #[error("{origin}: {source}")]
    Io {
        /// The file.
        origin: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not JSON of the set's shape.
    #[error("{origin}: {source}")]
    Json {
        /// The file.
        origin: String,
        /// Where and why.
        #[source]
        source: serde_json::Error,
    },
    /// Another format than this loader reads.
    #[error("{origin}: format is {found:?}, this loader reads {FACTS_FORMAT:?}")]
    Format {
        /// The file.
        origin: String,
        /// The format tag it carries.
        found: String,
    },
}

/// A labelled sentence.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct LabelledItem {
    /// What the user said.
    pub text: String,
    /// The facts a careful reader takes from it, `[subject, predicate, object]`.
    pub facts: Vec<[String; 3]>,
}

/// A `hearth-facts/1` file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct LabelledSet {
    /// The format tag.
    pub format: String,
    /// Its name, for reports.
    #[serde(default)]
    pub name: String,
    /// The sentences.
    pub items: Vec<LabelledItem>,
}

impl LabelledSet {
    /// Reads and checks a file.
    pub fn load(path: &Path) -> Result<LabelledSet, FactsFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| FactsFileError::Io {
            origin: path.display().to_string(),
            source,
        })?;
        LabelledSet::parse(&text, &path.display().to_string())
    }

    /// The set shipped with the project (46 sentences in English and Chinese), built into the
    /// binary so the benchmark runs from any directory.
    pub fn shipped() -> LabelledSet {
        LabelledSet::parse(SHIPPED, "labelled_facts.json").expect("the shipped set parses")
    }

    /// Parses and checks a file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<LabelledSet, FactsFileError> {
        let set: LabelledSet =
            serde_json::from_str(text).map_err(|source| FactsFileError::Json {
                origin: origin.to_owned(),
                source,
            })?;
        if set.format != FACTS_FORMAT {
            return Err(FactsFileError::Format {
                origin: origin.to_owned(),
                found: set.format,
            });
        }
        Ok(set)
    }

    /// The sentences as cold items (one a day apart, numbered from 0).
    fn cold_items(&self) -> Vec<ColdItem> {
        self.items
            .iter()
            .enumerate()
            .map(|(i, item)| ColdItem {
                id: i as i64,
                turn_id: format!("turn-{i}"),
                said_ms: 1_700_000_000_000 + i as i64 * 86_400_000,
                text: item.text.clone(),
                utc_offset_secs: 0,
            })
            .collect()
    }
}

/// Found against wanted, summed over the sentences.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
    /// Facts found that a label has.
    pub correct: usize,
    /// Facts found.
    pub found: usize,
    /// Facts labelled.
    pub wanted: usize,
}

impl Score {
    /// Correct over found (1 when nothing was found).
    pub fn precision(&self) -> f64 {
        if self.found == 0 {
            1.0
        } else {
            self.correct as f64 / self.found as f64
        }
    }

    /// Correct over wanted (1 when nothing was labelled).
    pub fn recall(&self) -> f64 {
        if self.wanted == 0 {
            1.0
        } else {
            self.correct as f64 / self.wanted as f64
        }
    }

    fn add(&mut self, found: &BTreeSet<Triple>, wanted: &BTreeSet<Triple>) {
        self.correct += found.intersection(wanted).count();
        self.found += found.len();
        self.wanted += wanted.len();
    }
}

type Triple = (String, String, String);

fn triples(statements: &[Statement]) -> BTreeSet<Triple> {
    statements
        .iter()
        .flat_map(|s| &s.facts)
        .map(|f| {
            (
                f.subject.to_lowercase(),
                f.predicate.to_lowercase(),
                f.object.to_lowercase(),
            )
        })
        .collect()
}

fn labels(item: &LabelledItem) -> BTreeSet<Triple> {
    item.facts
        .iter()
        .map(|[s, p, o]| (s.to_lowercase(), p.to_lowercase(), o.to_lowercase()))
        .collect()
}

/// The rule distiller's score on `set`.
pub fn score_rules(set: &LabelledSet) -> Score {
    let rules = RuleDistiller::default();
    let mut score = Score::default();
    for (item, cold) in set.items.iter().zip(set.cold_items()) {
        score.add(&triples(&rules.statements(&cold)), &labels(item));
    }
    score
}

/// Where the rules and a sentence's labels disagree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    /// The sentence.
    pub text: String,
    /// Labelled facts the rules did not find, `(subject, predicate, object)` lowered.
    pub missed: Vec<(String, String, String)>,
    /// Facts the rules found that no label has.
    pub wrong: Vec<(String, String, String)>,
}

/// The sentences of `set` where the rule distiller missed a labelled fact or found one no
/// label has, in the set's order: what a change to the rules is read against.
pub fn rule_disagreements(set: &LabelledSet) -> Vec<Disagreement> {
    let rules = RuleDistiller::default();
    set.items
        .iter()
        .zip(set.cold_items())
        .filter_map(|(item, cold)| {
            let (found, wanted) = (triples(&rules.statements(&cold)), labels(item));
            let missed: Vec<Triple> = wanted.difference(&found).cloned().collect();
            let wrong: Vec<Triple> = found.difference(&wanted).cloned().collect();
            (!missed.is_empty() || !wrong.is_empty()).then(|| Disagreement {
                text: item.text.clone(),
                missed,
                wrong,
            })
        })
        .collect()
}

/// What the model distiller did on a set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelScore {
    /// Its grounded claims alone.
    pub model: Score,
    /// The rules' facts and its grounded claims together: what the graph holds.
    pub with_rules: Score,
    /// The rules alone, in the same run.
    pub rules: Score,
    /// Claims the grounding dropped (not in the sentence's own words).
    pub ungrounded: usize,
    /// Batches that failed (the model gave no answer): their sentences count as found nothing.
    pub failed_batches: usize,
    /// Prompts sent.
    pub batches: usize,
    /// Time in the model.
    pub model_time: Duration,
}

/// Runs the model distiller on `set`: each batch's prompt ([`model_prompt`]) goes to `ask`,
/// which answers the model's text (or why there is none).
pub fn score_model<E: std::fmt::Display>(
    set: &LabelledSet,
    mut ask: impl FnMut(&str) -> Result<String, E>,
    mut progress: impl FnMut(&str),
) -> ModelScore {
    let rules = RuleDistiller::default();
    let items = set.cold_items();
    let mut out = ModelScore::default();
    for (b, batch) in items.chunks(MODEL_BATCH).enumerate() {
        let prompt = model_prompt(batch);
        let started = Instant::now();
        let answer = ask(&prompt);
        out.model_time += started.elapsed();
        out.batches += 1;
        let (by_item, ungrounded) = match &answer {
            Ok(text) => parse_model_answer(text, batch),
            Err(why) => {
                progress(&format!("batch {}: no answer: {why}", b + 1));
                out.failed_batches += 1;
                Default::default()
            }
        };
        out.ungrounded += ungrounded;
        for (i, cold) in batch.iter().enumerate() {
            let wanted = labels(&set.items[cold.id as usize]);
            let model = by_item.get(&i).map(|s| triples(s)).unwrap_or_default();
            let ruled = triples(&rules.statements(cold));
            let both: BTreeSet<Triple> = model.union(&ruled).cloned().collect();
            out.model.add(&model, &wanted);
            out.rules.add(&ruled, &wanted);
            out.with_rules.add(&both, &wanted);
        }
        progress(&format!(
            "batch {}/{} answered in {:.1} s",
            b + 1,
            items.len().div_ceil(MODEL_BATCH),
            started.elapsed().as_secs_f64()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> LabelledSet {
        LabelledSet::shipped()
    }

    #[test]
    fn a_model_that_copies_the_labels_scores_perfectly_and_one_that_invents_scores_nothing() {
        let set = set();
        // An oracle answering with exactly the labelled facts of each prompt's sentences.
        let oracle = |prompt: &str| -> Result<String, String> {
            let mut lines = Vec::new();
            for line in prompt.lines().skip_while(|l| *l != "Messages:").skip(1) {
                let Some((n, text)) = line.split_once(": ") else {
                    continue;
                };
                let item = set
                    .items
                    .iter()
                    .find(|i| i.text == text)
                    .expect("a fixture sentence");
                for [s, p, o] in &item.facts {
                    lines.push(format!("{n} | {s} | {p} | {o}"));
                }
            }
            Ok(lines.join("\n"))
        };
        let scored = score_model(&set, oracle, |_| {});
        assert_eq!(scored.model.correct, scored.model.wanted, "{scored:?}");
        assert_eq!(scored.model.precision(), 1.0);
        assert_eq!(scored.with_rules.recall(), 1.0);
        assert_eq!(scored.rules, score_rules(&set));
        assert_eq!(scored.batches, set.items.len().div_ceil(MODEL_BATCH));
        // An answer of facts the sentences do not hold is dropped by the grounding.
        let liar = |_: &str| {
            Ok::<_, String>("1 | user | lives_in | Atlantis\n2 | Zed | job | astronaut".to_owned())
        };
        let scored = score_model(&set, liar, |_| {});
        assert_eq!(scored.model.found, 0);
        assert!(scored.ungrounded > 0);
        // A model that never answers: every batch counted as failed, the rules' score stands.
        let down = |_: &str| Err::<String, String>("connection refused".to_owned());
        let scored = score_model(&set, down, |_| {});
        assert_eq!(scored.failed_batches, scored.batches);
        assert_eq!(scored.with_rules, scored.rules);
    }

    #[test]
    fn a_file_of_another_format_is_refused_by_name() {
        let err = LabelledSet::parse(r#"{"format":"hearth-facts/2","items":[]}"#, "x.json")
            .expect_err("another format")
            .to_string();
        assert!(
            err.contains("x.json") && err.contains("hearth-facts/2"),
            "{err}"
        );
        let err = LabelledSet::parse("{", "y.json")
            .expect_err("not JSON")
            .to_string();
        assert!(err.starts_with("y.json: "), "{err}");
    }

    #[test]
    fn the_rules_keep_their_precision_on_the_whole_set() {
        let rules = score_rules(&set());
        assert_eq!(rules.wanted, 45);
        assert!(rules.precision() >= 0.85, "{rules:?}");
    }
}
