//! The `hearth-recall/1` file format: corpora of conversation items and questions whose answer
//! items are labelled. Read straight from a buffered reader into these types (no intermediate
//! JSON tree), so a large file costs its items, not twice its size.

use std::collections::{BTreeMap, HashMap};
use std::io::BufReader;
use std::path::Path;

use serde::Deserialize;

use super::RecallBenchError;

/// The one format version this loader reads.
pub const RECALL_FORMAT: &str = "hearth-recall/1";

/// One conversation item: a user or assistant turn of a session.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct CorpusItem {
    pub id: String,
    pub session: String,
    /// ISO-8601, or null when unknown.
    #[serde(default)]
    pub time: Option<String>,
    pub speaker: String,
    pub text: String,
}

/// A question asked of one corpus, with the ids of the items that hold its answer.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Question {
    pub id: String,
    pub corpus: String,
    #[serde(default)]
    pub time: Option<String>,
    pub text: String,
    #[serde(default)]
    pub evidence: Vec<String>,
    #[serde(default)]
    pub category: String,
}

/// A whole `hearth-recall/1` file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct RecallSet {
    pub format: String,
    #[serde(default)]
    pub name: String,
    /// Corpora by id, in id order (so a run is reproducible whatever the file's key order).
    pub corpora: BTreeMap<String, Vec<CorpusItem>>,
    pub questions: Vec<Question>,
}

impl RecallSet {
    /// Reads and checks a file: the format tag, unique item ids within a corpus, every
    /// question's corpus and evidence present.
    pub fn load(path: &Path) -> Result<RecallSet, RecallBenchError> {
        let file = std::fs::File::open(path).map_err(|source| RecallBenchError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let set: RecallSet = serde_json::from_reader(BufReader::with_capacity(1 << 20, file))
            .map_err(|e| RecallBenchError::Format {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        set.check().map_err(|message| RecallBenchError::Format {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(set)
    }

    /// Parses a file's text (tests, or data already in memory) and checks it like [`load`](Self::load).
    pub fn from_json(text: &str) -> Result<RecallSet, String> {
        let set: RecallSet = serde_json::from_str(text).map_err(|e| e.to_string())?;
        set.check()?;
        Ok(set)
    }

    /// The questions asked of `corpus` that have evidence to score, in file order.
    pub fn scored_questions(&self, corpus: &str) -> Vec<&Question> {
        self.questions
            .iter()
            .filter(|q| q.corpus == corpus && !q.evidence.is_empty())
            .collect()
    }

    fn check(&self) -> Result<(), String> {
        if self.format != RECALL_FORMAT {
            return Err(format!(
                "format is {:?}, this loader reads {RECALL_FORMAT:?}",
                self.format
            ));
        }
        let mut ids: HashMap<&str, std::collections::HashSet<&str>> = HashMap::new();
        for (corpus, items) in &self.corpora {
            let set = ids.entry(corpus).or_default();
            for item in items {
                if !set.insert(&item.id) {
                    return Err(format!("corpus {corpus:?}: item id {:?} repeats", item.id));
                }
            }
        }
        for q in &self.questions {
            let Some(set) = ids.get(q.corpus.as_str()) else {
                return Err(format!("question {:?}: no corpus {:?}", q.id, q.corpus));
            };
            if let Some(missing) = q.evidence.iter().find(|e| !set.contains(e.as_str())) {
                return Err(format!(
                    "question {:?}: evidence {missing:?} is not in corpus {:?}",
                    q.id, q.corpus
                ));
            }
        }
        Ok(())
    }
}
