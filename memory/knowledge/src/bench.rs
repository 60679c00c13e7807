//! The knowledge benchmark (`hearth bench knowledge FILE`): how well the knowledge base finds
//! the document a question is about.
//!
//! A `hearth-recall/1` set becomes a knowledge base: every session of a corpus is one document
//! (its turns, one `speaker: text` line each), and a question's relevant documents are the
//! sessions holding its evidence. Each corpus is written to a fresh knowledge base, indexed with
//! the given embedder (or keywords alone), and every question is searched once per arm: the
//! knowledge base's own ranking at each dense floor asked for, its keywords alone, and a plain
//! Okapi BM25 over the same documents in the same run. The evidence labels only score the
//! results. A document hit at rank r counts for every k ≥ r.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_memory::recall_bench::{Latency, RecallBenchError, RecallSet};
use hearth_memory::{Embedder, OkapiBm25};

use crate::{KnowledgeBase, KnowledgeError};

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KnowledgeBenchError {
    /// The set could not be read.
    #[error(transparent)]
    Set(#[from] RecallBenchError),
    /// The knowledge base failed.
    #[error("knowledge bench: {0}")]
    Knowledge(#[from] KnowledgeError),
    /// The scratch directory could not be made.
    #[error("knowledge bench: scratch directory: {0}")]
    Scratch(std::io::Error),
    /// No k to measure at.
    #[error("knowledge bench: no k given")]
    NoK,
}

/// One way of searching, and where each question's first relevant document came.
#[derive(Clone, Debug, PartialEq)]
pub struct Arm {
    /// What searched: `floor 0.30`, `keywords only`, `plain BM25`.
    pub label: String,
    /// Per question, the 1-based rank of its first relevant document (`None`: not in the top
    /// of the largest k).
    pub ranks: Vec<Option<usize>>,
    /// Query latency over the questions.
    pub latency: Latency,
}

impl Arm {
    /// The share of questions with a relevant document in the top `k`.
    pub fn hit_at(&self, k: usize) -> f64 {
        if self.ranks.is_empty() {
            return 0.0;
        }
        let hits = self
            .ranks
            .iter()
            .filter(|r| r.is_some_and(|r| r <= k))
            .count();
        hits as f64 / self.ranks.len() as f64
    }
}

/// What the benchmark measured on one set.
#[derive(Clone, Debug, PartialEq)]
pub struct KnowledgeBenchReport {
    /// The set's name.
    pub name: String,
    /// Documents written, over every corpus.
    pub documents: usize,
    /// Questions scored.
    pub questions: usize,
    /// The k values, ascending.
    pub ks: Vec<usize>,
    /// Every arm, the knowledge base's own first.
    pub arms: Vec<Arm>,
    /// Writing and indexing every corpus.
    pub ingest: Duration,
}

impl KnowledgeBenchReport {
    /// A plain-text table: one row per arm, hit@k for each k and the query p50.
    pub fn render(&self) -> String {
        let mut out = format!(
            "knowledge benchmark {:?}: {} documents, {} questions, indexed in {:.1} s\n",
            self.name,
            self.documents,
            self.questions,
            self.ingest.as_secs_f64()
        );
        out.push_str(&format!("{:<26}", "arm"));
        for k in &self.ks {
            out.push_str(&format!("{:>10}", format!("hit@{k}")));
        }
        out.push_str("   query p50 ms\n");
        for arm in &self.arms {
            out.push_str(&format!("{:<26}", arm.label));
            for &k in &self.ks {
                out.push_str(&format!("{:>10.3}", arm.hit_at(k)));
            }
            out.push_str(&format!("   {:.2}\n", arm.latency.p50.as_secs_f64() * 1e3));
        }
        out
    }

    /// The report as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let arms: Vec<serde_json::Value> = self
            .arms
            .iter()
            .map(|a| {
                let hits: serde_json::Map<String, serde_json::Value> = self
                    .ks
                    .iter()
                    .map(|&k| (format!("hit@{k}"), serde_json::json!(a.hit_at(k))))
                    .collect();
                serde_json::json!({
                    "label": a.label,
                    "hits": hits,
                    "latency_ms_p50": a.latency.p50.as_secs_f64() * 1e3,
                })
            })
            .collect();
        serde_json::json!({
            "name": self.name,
            "documents": self.documents,
            "questions": self.questions,
            "ks": self.ks,
            "ingest_s": self.ingest.as_secs_f64(),
            "arms": arms,
        })
    }
}

/// Runs the benchmark on the set at `path`: each corpus's sessions as documents of a fresh
/// knowledge base under `scratch`, searched with `embedder` at every dense floor of `floors`,
/// by keywords alone, and by plain BM25, measured at every `k` of `ks`.
pub fn run(
    path: &Path,
    ks: &[usize],
    embedder: Option<Arc<dyn Embedder>>,
    floors: &[f32],
    scratch: &Path,
    mut progress: impl FnMut(&str),
) -> Result<KnowledgeBenchReport, KnowledgeBenchError> {
    let mut ks: Vec<usize> = ks.iter().copied().filter(|&k| k > 0).collect();
    ks.sort_unstable();
    ks.dedup();
    let depth = *ks.last().ok_or(KnowledgeBenchError::NoK)?;
    progress(&format!("loading {}", path.display()));
    let set = RecallSet::load(path)?;
    let mut labels: Vec<String> = Vec::new();
    if embedder.is_some() {
        labels.extend(floors.iter().map(|f| format!("dense floor {f:.2}")));
    }
    labels.push("keywords only".to_owned());
    labels.push("plain BM25".to_owned());
    let mut ranks: Vec<Vec<Option<usize>>> = vec![Vec::new(); labels.len()];
    let mut took: Vec<Vec<Duration>> = vec![Vec::new(); labels.len()];
    let mut documents = 0;
    let mut ingest = Duration::ZERO;
    for (n, (corpus_id, items)) in set.corpora.iter().enumerate() {
        let questions = set.scored_questions(corpus_id);
        if questions.is_empty() {
            continue;
        }
        let dir = scratch.join(format!("corpus-{n}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(KnowledgeBenchError::Scratch)?;
        let started = Instant::now();
        // One document per session, in order of first appearance, and each item's document.
        let mut documents_of: HashMap<&str, usize> = HashMap::new();
        let mut document_of_item: HashMap<&str, usize> = HashMap::with_capacity(items.len());
        let mut texts: Vec<String> = Vec::new();
        for item in items {
            let at = *documents_of.entry(&item.session).or_insert_with(|| {
                texts.push(String::new());
                texts.len() - 1
            });
            document_of_item.insert(&item.id, at);
            let text = &mut texts[at];
            text.push_str(&item.speaker);
            text.push_str(": ");
            text.push_str(&item.text);
            text.push('\n');
        }
        let name = |i: usize| format!("s{i:05}");
        let root = dir.join("knowledge");
        let index = dir.join("knowledge.db");
        let mut kb = KnowledgeBase::open(&root, &index, embedder.clone())?;
        for (i, text) in texts.iter().enumerate() {
            kb.create(&name(i), text, false)?;
        }
        kb.sync()?;
        ingest += started.elapsed();
        documents += texts.len();
        progress(&format!(
            "corpus {corpus_id}: {} documents indexed, asking {} questions",
            texts.len(),
            questions.len()
        ));
        let mut keywords = KnowledgeBase::open(&root, &index, None)?;
        let mut bm25 = OkapiBm25::new();
        for text in &texts {
            bm25.add(text);
        }
        let doc_of = |name: &str| name.strip_prefix('s').and_then(|n| n.parse::<usize>().ok());
        for q in questions {
            let relevant: Vec<usize> = q
                .evidence
                .iter()
                .filter_map(|e| document_of_item.get(e.as_str()).copied())
                .collect();
            let first = |found: &[usize]| {
                found
                    .iter()
                    .position(|d| relevant.contains(d))
                    .map(|r| r + 1)
            };
            let mut arm = 0;
            if embedder.is_some() {
                for &floor in floors {
                    kb.set_min_cosine(floor);
                    let t = Instant::now();
                    let hits = kb.search(&q.text, depth)?;
                    took[arm].push(t.elapsed());
                    let found: Vec<usize> = hits.iter().filter_map(|h| doc_of(&h.name)).collect();
                    ranks[arm].push(first(&found));
                    arm += 1;
                }
            }
            let t = Instant::now();
            let hits = keywords.search(&q.text, depth)?;
            took[arm].push(t.elapsed());
            let found: Vec<usize> = hits.iter().filter_map(|h| doc_of(&h.name)).collect();
            ranks[arm].push(first(&found));
            arm += 1;
            let t = Instant::now();
            let hits = bm25.search(&q.text, depth);
            took[arm].push(t.elapsed());
            let found: Vec<usize> = hits.iter().map(|h| h.0).collect();
            ranks[arm].push(first(&found));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    let questions = ranks.first().map_or(0, Vec::len);
    let arms = labels
        .into_iter()
        .zip(ranks)
        .zip(took)
        .map(|((label, ranks), took)| Arm {
            label,
            ranks,
            latency: Latency::of(&took),
        })
        .collect();
    Ok(KnowledgeBenchReport {
        name: set.name.clone(),
        documents,
        questions,
        ks,
        arms,
        ingest,
    })
}
