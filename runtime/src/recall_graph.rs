//! Graph-assisted recall for `hearth bench recall --graph`: each corpus's cold entries are
//! distilled into a fresh L3 graph with the model-free distiller (the rules and the clause
//! extractor, as the daemon's heartbeat runs them), and each question's graph recall (as the
//! daemon's indexer recalls for a turn, [`INDEXER_LIMITS`]) is turned into the turns its facts
//! came from, best fact first, to be fused with cold recall.
//!
//! Nothing here reads the questions' evidence: the graph sees the same items and questions
//! cold recall does.

use hearth_graph::{ColdItem, FactId, GraphError, GraphStore, RecallLimits, RuleDistiller};
use hearth_kernel::graph_service::{INDEXER_FACTS, INDEXER_LIMITS, facts_block};
use hearth_memory::recall_bench::{AssistError, AssistIngest, RecallAssist};
use hearth_memory::{Embedder, Store, estimate_tokens};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Cold entries read per distillation call.
const BATCH: usize = 256;
/// Facts asked per question: enough that their turns fill the deepest k measured.
const FACTS: usize = 20;

/// The graph side of the benchmark: one graph per corpus, in a private temp directory.
pub struct GraphAssist {
    weight: f64,
    /// Tokens of the indexer's block each question would have added to the prompt.
    block_tokens: Vec<usize>,
    dir: PathBuf,
    graph: Option<GraphStore>,
    corpora: usize,
    /// The model the graph's facts are embedded and searched by (`None`: keywords only).
    embedder: Option<Arc<dyn Embedder>>,
    /// How each question is recalled: the daemon indexer's limits unless a run changes them.
    limits: RecallLimits,
}

impl GraphAssist {
    /// A graph assist whose list weighs `weight` against cold recall's 1, its files in a
    /// fresh directory under the system temp dir.
    pub fn new(weight: f64) -> std::io::Result<Self> {
        let dir = std::env::temp_dir().join(format!("hearth-recall-graph-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        Ok(Self {
            weight,
            block_tokens: Vec::new(),
            dir,
            graph: None,
            corpora: 0,
            embedder: None,
            limits: INDEXER_LIMITS,
        })
    }

    /// Embeds each graph's facts with `embedder` and searches them by it, keeping the facts
    /// whose cosine to the question reaches `floor` (as the daemon's graph does with its
    /// main model).
    pub fn with_vectors(mut self, embedder: Arc<dyn Embedder>, floor: f32) -> Self {
        self.embedder = Some(embedder);
        self.limits.dense_floor = floor;
        self
    }
}

impl Drop for GraphAssist {
    fn drop(&mut self) {
        self.graph = None;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl RecallAssist for GraphAssist {
    fn name(&self) -> &str {
        "graph"
    }

    fn weight(&self) -> f64 {
        self.weight
    }

    fn summary(&self) -> Option<String> {
        let mut tokens = self.block_tokens.clone();
        tokens.sort_unstable();
        let at = |p: f64| tokens[((tokens.len() - 1) as f64 * p).round() as usize];
        (!tokens.is_empty()).then(|| {
            format!(
                "indexer block per query: tokens p50 {} / p95 {} / max {}, empty in {} of {}",
                at(0.5),
                at(0.95),
                tokens[tokens.len() - 1],
                tokens.iter().filter(|&&t| t == 0).count(),
                tokens.len()
            )
        })
    }

    fn ingest(&mut self, _corpus_id: &str, store: &Store) -> Result<AssistIngest, AssistError> {
        // One corpus at a time: the previous graph is closed and its file removed.
        self.graph = None;
        self.corpora += 1;
        let path = self.dir.join(format!("corpus-{}.db", self.corpora));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let mut graph = GraphStore::open(&path)?;
        graph.set_embedder(self.embedder.clone());
        let started = Instant::now();
        let mut entries = store.cold_entries();
        let mut items = 0;
        loop {
            // One paged read over cold context, not a query per entry.
            let batch = entries
                .by_ref()
                .take(BATCH)
                .map(|entry| entry.map(|e| ColdItem::from(&e)))
                .collect::<Result<Vec<_>, _>>()?;
            if batch.is_empty() {
                break;
            }
            items += batch.len();
            let now = batch.iter().map(|i| i.said_ms).max().unwrap_or(0);
            graph.distill_with(&RuleDistiller::default(), &batch, now)?;
        }
        self.graph = Some(graph);
        Ok(AssistIngest {
            items,
            took: started.elapsed(),
        })
    }

    fn recall(
        &mut self,
        query: &str,
        asked_ms: i64,
        depth: usize,
    ) -> Result<Vec<String>, AssistError> {
        let Some(graph) = &self.graph else {
            return Ok(Vec::new());
        };
        // Recalled as the daemon's indexer recalls for a turn: the facts the question's words
        // and time bear on.
        let hits = graph.recall_with(query, asked_ms, FACTS.max(depth), self.limits)?;
        // The block the indexer would put in this turn's prompt (its best facts).
        let mut shown: Vec<_> = hits.iter().take(INDEXER_FACTS).cloned().collect();
        let block = facts_block(&mut shown, usize::MAX, graph.zone());
        self.block_tokens.push(estimate_tokens(&block.text));
        let mut turns = Vec::new();
        let mut seen = HashSet::new();
        for hit in hits {
            for turn in fact_turns(graph, hit.id)? {
                if seen.insert(turn.clone()) {
                    turns.push(turn);
                }
            }
            if turns.len() >= depth {
                break;
            }
        }
        turns.truncate(depth);
        Ok(turns)
    }
}

/// The turns a fact was stated in, first statement first.
fn fact_turns(graph: &GraphStore, id: FactId) -> Result<Vec<String>, GraphError> {
    let why = graph.why(id)?;
    Ok(why.sources.into_iter().map(|s| s.turn_id).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_memory::MemoryModels;
    use hearth_memory::recall_bench::{Measure, RecallSet, System, run_set};

    /// A question whose words share nothing with the turn that answers it, but whose
    /// predicate ("home" → lives_in) the graph knows: only the graph-assisted list finds it.
    const SET: &str = r#"{"format": "hearth-recall/1", "name": "home",
      "corpora": {"c": [
        {"id": "t1", "session": "s1", "time": "2026-01-05T10:00:00Z", "speaker": "user", "text": "I live in Porto."},
        {"id": "t2", "session": "s1", "time": "2026-01-05T10:01:00Z", "speaker": "assistant", "text": "Porto is lovely."},
        {"id": "t3", "session": "s2", "time": "2026-01-06T10:00:00Z", "speaker": "user", "text": "Which city has the best custard tarts?"},
        {"id": "t4", "session": "s2", "time": "2026-01-06T10:01:00Z", "speaker": "assistant", "text": "Lisbon, many say."}
      ]},
      "questions": [{"id": "q1", "corpus": "c", "time": "2026-02-01T10:00:00Z",
        "text": "what is my home town?", "evidence": ["t1"], "category": "single-session-user"}]}"#;

    /// The set through cold recall (keywords only) and `assist`, at k 1 and 5.
    fn run(assist: &mut GraphAssist) -> Vec<hearth_memory::recall_bench::Report> {
        let set = RecallSet::from_json(SET).expect("set");
        run_set(
            &set,
            &[1, 5],
            &MemoryModels::default(),
            &[hearth_memory::RecallConfig::default()],
            None,
            Some(assist),
            &mut |_| {},
        )
        .expect("bench runs")
    }

    #[test]
    fn the_graph_assisted_report_finds_a_fact_the_keywords_miss() {
        let mut assist = GraphAssist::new(1.0).expect("temp dir");
        let reports = run(&mut assist);
        assert_eq!(reports.len(), 2, "cold recall and the assisted report");
        assert_eq!(reports[1].label, "+graph");
        assert!(
            reports[1].mode.contains("fused with graph"),
            "{}",
            reports[1].mode
        );
        let at1 = |r: &hearth_memory::recall_bench::Report| {
            r.recall_at(System::Hearth, Measure::TurnAny, 1)
        };
        assert_eq!(at1(&reports[0]), 0.0, "no shared word: keywords miss it");
        assert_eq!(at1(&reports[1]), 1.0, "the lives_in fact names its turn");
    }

    /// With the graph's vectors, a fact joins a question's list only when it is near enough:
    /// a question about something else finds nothing at the floor, the nearest fact without it.
    #[test]
    fn the_graph_vectors_bring_a_fact_only_above_their_floor() {
        let model: Arc<dyn Embedder> = Arc::new(
            hearth_memory::OnnxEmbedder::locate_and_load(None, 1)
                .unwrap_or_else(|e| panic!("{e} (run `make setup`)")),
        );
        let store_of = |floor: f32| {
            let mut assist = GraphAssist::new(1.0)
                .expect("temp dir")
                .with_vectors(model.clone(), floor);
            run(&mut assist);
            assist
                .recall("how do I fix a flat bicycle tyre?", 1_800_000_000_000, 5)
                .expect("recall")
        };
        assert!(store_of(0.35).is_empty());
        assert!(
            !store_of(0.0).is_empty(),
            "without a floor the nearest fact comes"
        );
    }
}
