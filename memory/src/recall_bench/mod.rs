//! The recall benchmark (`hearth bench recall`): how well cold context finds what was said.
//!
//! A `hearth-recall/1` file holds conversation corpora and labelled questions (see
//! [`RecallSet`]). For each corpus every item is archived into a fresh store through the same
//! [`ColdContext`] path a prune takes (window append, then move to cold, embedded in batches);
//! then every question is asked with [`ColdContext::recall`] — including the access it counts —
//! and timed. A plain in-memory Okapi BM25 ([`OkapiBm25`]) runs on the same items and questions
//! in the same run, so the report shows Hearth and the baseline side by side. The evidence
//! labels are used only to score the returned lists, never to rank.
//!
//! ```no_run
//! let report = hearth_memory::recall_bench::run(
//!     std::path::Path::new("longmemeval-oracle-pooled.json"),
//!     &[1, 5, 10],
//!     &hearth_memory::MemoryModels::default(),
//!     |line| eprintln!("{line}"),
//! )?;
//! println!("{}", report.render());
//! # Ok::<(), hearth_memory::recall_bench::RecallBenchError>(())
//! ```

mod ablation;
mod assist;
mod explain;
mod format;
mod json;
mod kept_store;
mod model_tokens;
pub use model_tokens::ModelTokens;
mod prompt_reuse;
mod prune_replay;
mod report;
mod short_turns;
mod small_talk_probe;
#[cfg(test)]
mod tests;
mod third_person;
mod variant;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::recall::{
    AGENT_SOURCE, ColdContext, EMBED_BATCH, OkapiBm25, RecallConfig, RecallError, parse_iso8601,
};
use crate::{ContextEvent, DEFAULT_MAX_CONTEXT_TOKENS, MemoryModels, Store, compute_token_budget};

pub use ablation::{DenseLists, FusionWeights, PriorsSwitch, ablation_grid, arm_label};
pub use assist::{AssistError, AssistIngest, RecallAssist, fuse_assisted};
pub use explain::explain_questions;
pub use format::{CorpusItem, Question, RECALL_FORMAT, RecallSet};
pub use prompt_reuse::{PromptShape, ReuseStats};
pub use prune_replay::{PruneArm, PruneReport, run_prune};
pub use report::{Latency, Measure, QuestionResult, Ranks, Report, System, TokenStats};
pub use small_talk_probe::{SMALL_TALK_PROBES, SmallTalkCount};
pub use variant::{NAMED_PARTNER, NAMED_USER, SetVariant, sample};

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecallBenchError {
    #[error("recall bench: {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not a valid `hearth-recall/1` file.
    #[error("recall bench: {path} is not a usable hearth-recall/1 file: {message}")]
    Format { path: PathBuf, message: String },
    #[error("recall bench: {0}")]
    Recall(#[from] RecallError),
    #[error("recall bench: {0}")]
    Store(#[from] crate::StoreError),
    /// No k to measure at.
    #[error("recall bench: no k given")]
    NoK,
    /// The assisting source (the graph) failed.
    #[error("recall bench: the assisting source failed: {source}")]
    Assist {
        #[source]
        source: AssistError,
    },
}

/// Runs the benchmark on the file at `path` with the default [`RecallConfig`]: recall measured at
/// every `k` of `ks`, with `models` (none: keyword recall only).
pub fn run(
    path: &Path,
    ks: &[usize],
    models: &MemoryModels,
    progress: impl FnMut(&str),
) -> Result<Report, RecallBenchError> {
    let mut reports = run_configs(path, ks, models, &[RecallConfig::default()], None, progress)?;
    Ok(reports.remove(0))
}

/// Runs the benchmark once per configuration over a single ingest (for tuning the ranking).
/// The ingest uses the first configuration's `passage_chars`; the others differ in ranking
/// only. With `store_dir`, each corpus's store is kept there (`<corpus id>.db`) and reused by a
/// later run when it already holds every item: ranking can then be re-measured without
/// re-embedding (the reported ingest is then the earlier run's work, not measured: 0 s). A
/// store holding the corpus's first items only (a stopped ingest) is resumed, and held entries
/// lacking a model's vector get it; a store holding anything else is started afresh.
/// Returns one report per configuration, in order.
pub fn run_configs(
    path: &Path,
    ks: &[usize],
    models: &MemoryModels,
    configs: &[RecallConfig],
    store_dir: Option<&Path>,
    progress: impl FnMut(&str),
) -> Result<Vec<Report>, RecallBenchError> {
    run_variant(
        path,
        SetVariant::AsIs,
        None,
        ks,
        models,
        configs,
        store_dir,
        None,
        progress,
    )
}

/// [`run_configs`] on `variant` of the file, or of its [`sample`] of about `sampled` questions.
/// A variant that rewrites items, and a sample, keep their stores in a subdirectory of
/// `store_dir` named after them, so they never pass for the file's. With `assist`, one more
/// report follows the configurations' (label `+<name>`): the first configuration's cold recall
/// fused with the assist's list, on the same ingest.
#[allow(clippy::too_many_arguments)]
pub fn run_variant(
    path: &Path,
    variant: SetVariant,
    sampled: Option<usize>,
    ks: &[usize],
    models: &MemoryModels,
    configs: &[RecallConfig],
    store_dir: Option<&Path>,
    assist: Option<&mut dyn RecallAssist>,
    mut progress: impl FnMut(&str),
) -> Result<Vec<Report>, RecallBenchError> {
    progress(&format!("loading {}", path.display()));
    let mut set = RecallSet::load(path)?;
    let mut dir = store_dir.map(Path::to_path_buf);
    if let Some(n) = sampled {
        set = sample(set, n);
        dir = dir.map(|d| d.join(format!("sample-{n}")));
    }
    let set = variant.apply(set);
    if let Some(items) = variant.items_name() {
        dir = dir.map(|d| d.join(items));
    }
    run_set(
        &set,
        ks,
        models,
        configs,
        dir.as_deref(),
        assist,
        &mut progress,
    )
}

/// [`run_variant`] on a set already in memory.
pub fn run_set(
    set: &RecallSet,
    ks: &[usize],
    models: &MemoryModels,
    configs: &[RecallConfig],
    store_dir: Option<&Path>,
    mut assist: Option<&mut dyn RecallAssist>,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Report>, RecallBenchError> {
    let mut ks: Vec<usize> = ks.iter().copied().filter(|&k| k > 0).collect();
    ks.sort_unstable();
    ks.dedup();
    let depth = *ks.last().ok_or(RecallBenchError::NoK)?;
    let configs: Vec<RecallConfig> = if configs.is_empty() {
        vec![RecallConfig::default()]
    } else {
        configs.to_vec()
    };
    let mode = match (&models.dense, &models.companion) {
        (Some(e), Some(c)) => format!(
            "dense {} and companion {} fused with FTS5 BM25",
            e.fingerprint(),
            c.fingerprint()
        ),
        (Some(e), None) => format!("dense {} fused with FTS5 BM25", e.fingerprint()),
        (None, Some(c)) => format!("companion {} fused with FTS5 BM25", c.fingerprint()),
        (None, None) => "keyword only (FTS5 BM25): no dense model".to_owned(),
    };
    if let Some(dir) = store_dir {
        std::fs::create_dir_all(dir).map_err(|source| RecallBenchError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    // What a turn of the daemon injects, with a provider of undeclared window and no system
    // prompt: the most memory a turn may ever be given.
    let memory_tokens = compute_token_budget(DEFAULT_MAX_CONTEXT_TOKENS, "").memory_tokens;
    let model_tokens = model_tokens::ModelTokens::locate();
    let mut results: Vec<Vec<QuestionResult>> = vec![Vec::new(); configs.len()];
    let mut latencies: Vec<Vec<Duration>> = vec![Vec::new(); configs.len()];
    let mut bm25_latency = Vec::new();
    let mut assisted: Vec<QuestionResult> = Vec::new();
    let mut assisted_latency = Vec::new();
    let mut assist_ingest = AssistIngest::default();
    let mut ingest = Duration::ZERO;
    let mut items = 0;
    let mut reused_items = 0;
    let mut small_talk = SmallTalkCount::default();
    let skipped = set
        .questions
        .iter()
        .filter(|q| q.evidence.is_empty())
        .count();

    for (corpus_id, corpus) in &set.corpora {
        let questions = set.scored_questions(corpus_id);
        if questions.is_empty() {
            continue;
        }
        let scratch;
        let store_path = match store_dir {
            Some(dir) => dir.join(format!("{corpus_id}.db")),
            None => {
                scratch = ScratchDir::new()?;
                scratch.path().join("memory.db")
            }
        };
        let events = to_events(corpus);
        // What a kept store already holds of this corpus; anything else is started afresh.
        let (store, held) = match store_dir {
            Some(_) => kept_store::open(&store_path, &events)?,
            None => (Store::open(&store_path)?, 0),
        };
        let vectors_complete = kept_store::vectors_complete(&store, models)?;
        let mut cold =
            ColdContext::new(store, models.dense.clone()).with_config(configs[0].clone());
        if let Some(companion) = &models.companion {
            cold = cold.with_companion(companion.clone());
        }

        progress(&format!(
            "corpus {corpus_id}: {}",
            match held {
                0 => format!("archiving {} items", corpus.len()),
                n if n == corpus.len() && vectors_complete =>
                    format!("reusing the kept store of {n} items"),
                n => format!(
                    "resuming the kept store: {n} of {} items held{}",
                    corpus.len(),
                    if vectors_complete {
                        ""
                    } else {
                        ", some without every model's vector"
                    }
                ),
            }
        ));
        let started = Instant::now();
        let number: HashMap<&str, usize> = corpus
            .iter()
            .enumerate()
            .map(|(i, item)| (item.id.as_str(), i))
            .collect();
        let mut sessions: HashMap<&str, usize> = HashMap::new();
        let session_of: Vec<usize> = corpus
            .iter()
            .map(|item| {
                let next = sessions.len();
                *sessions.entry(item.session.as_str()).or_insert(next)
            })
            .collect();
        let now = now_ms();
        let mut done = held;
        let mut last_report = Instant::now();
        for batch in events[held..].chunks(EMBED_BATCH) {
            cold.archive_events(batch.to_vec(), "import", now)?;
            done += batch.len();
            if last_report.elapsed() >= Duration::from_secs(5) {
                last_report = Instant::now();
                progress(&format!(
                    "corpus {corpus_id}: {done}/{} archived ({:.0} items/s)",
                    corpus.len(),
                    (done - held) as f64 / started.elapsed().as_secs_f64()
                ));
            }
        }
        if !vectors_complete {
            let filled = kept_store::fill_vectors(&mut cold)?;
            progress(&format!(
                "corpus {corpus_id}: {filled} missing vectors of held items filled"
            ));
        }
        ingest += started.elapsed();
        items += corpus.len();
        reused_items += held;
        if let Some(chars) = configs
            .iter()
            .find(|c| c.passage_list_weight > 0.0 && c.passage_list_chars > 0)
            .map(|c| c.passage_list_chars)
        {
            let t = Instant::now();
            let passages = cold.index_passages(chars)?;
            progress(&format!(
                "corpus {corpus_id}: {passages} passages of the person's long entries embedded in {:.1} s",
                t.elapsed().as_secs_f64()
            ));
        }

        if let Some(assist) = assist.as_deref_mut() {
            let did = assist
                .ingest(corpus_id, cold.store())
                .map_err(|source| RecallBenchError::Assist { source })?;
            assist_ingest.items += did.items;
            assist_ingest.took += did.took;
        }

        let mut bm25 = OkapiBm25::new();
        for item in corpus {
            bm25.add(&item.text);
        }
        let evidence: Vec<Vec<usize>> = questions
            .iter()
            .map(|q| q.evidence.iter().map(|e| number[e.as_str()]).collect())
            .collect();
        let mut baseline = Vec::with_capacity(questions.len());
        for q in &questions {
            let t = Instant::now();
            let hits = bm25.search(&q.text, depth);
            bm25_latency.push(t.elapsed());
            baseline.push(hits.into_iter().map(|h| h.0).collect::<Vec<usize>>());
        }

        for (c, config) in configs.iter().enumerate() {
            cold.set_config(config.clone());
            progress(&format!(
                "corpus {corpus_id}: asking {} questions (config {}/{})",
                questions.len(),
                c + 1,
                configs.len()
            ));
            for (qi, q) in questions.iter().enumerate() {
                // Asked when the file says it was asked: what "two weeks ago" means depends on
                // it.
                let asked = q
                    .time
                    .as_deref()
                    .and_then(parse_iso8601)
                    .unwrap_or_else(now_ms);
                let t = Instant::now();
                let hits = cold.recall(&q.text, depth, asked)?;
                latencies[c].push(t.elapsed());
                let ranked: Vec<usize> = hits
                    .iter()
                    .filter_map(|h| number.get(h.event.id.as_str()).copied())
                    .collect();
                let cold_took = t.elapsed();
                let injection = cold.inject(&q.text, memory_tokens, asked)?;
                let injected_evidence = injection
                    .event_ids
                    .iter()
                    .filter_map(|id| number.get(id.as_str()))
                    .any(|n| evidence[qi].contains(n));
                let result = QuestionResult {
                    id: q.id.clone(),
                    category: q.category.clone(),
                    hearth: Ranks::of(&ranked, &evidence[qi], &session_of),
                    bm25: Ranks::of(&baseline[qi], &evidence[qi], &session_of),
                    inject_tokens: crate::estimate_tokens(&injection.block),
                    inject_model_tokens: model_tokens.as_ref().map(|t| t.count(&injection.block)),
                    injected_evidence,
                };
                if c == 0
                    && let Some(assist) = assist.as_deref_mut()
                {
                    let t = Instant::now();
                    let found: Vec<usize> = assist
                        .recall(&q.text, asked, depth)
                        .map_err(|source| RecallBenchError::Assist { source })?
                        .iter()
                        .filter_map(|id| number.get(id.as_str()).copied())
                        .collect();
                    let fused = fuse_assisted(&ranked, &found, assist.weight(), depth);
                    assisted_latency.push(cold_took + t.elapsed());
                    assisted.push(QuestionResult {
                        hearth: Ranks::of(&fused, &evidence[qi], &session_of),
                        ..result.clone()
                    });
                }
                results[c].push(result);
            }
        }
        cold.set_config(configs[0].clone());
        small_talk.add(SmallTalkCount::probe(&mut cold, memory_tokens, now)?);
    }

    let bm25_latency = Latency::of(&bm25_latency);
    let assisted_report = assist.map(|a| Report {
        label: format!("+{}", a.name()),
        name: set.name.clone(),
        corpora: set.corpora.len(),
        items,
        questions: assisted,
        skipped,
        ks: ks.clone(),
        mode: format!(
            "{mode}, fused with {} at weight {} ({} items built in {:.1} s, {:.0} items/s){}",
            a.name(),
            a.weight(),
            assist_ingest.items,
            assist_ingest.took.as_secs_f64(),
            assist_ingest.items as f64 / assist_ingest.took.as_secs_f64().max(1e-9),
            a.summary().map(|s| format!("; {s}")).unwrap_or_default()
        ),
        config: configs[0].clone(),
        ingest,
        reused_items,
        hearth_latency: Latency::of(&assisted_latency),
        bm25_latency,
        memory_tokens,
        small_talk: SmallTalkCount::default(),
    });
    let mut reports: Vec<Report> = configs
        .into_iter()
        .zip(results)
        .zip(latencies)
        .enumerate()
        .map(|(c, ((config, questions), lat))| Report {
            label: String::new(),
            name: set.name.clone(),
            corpora: set.corpora.len(),
            items,
            questions,
            skipped,
            ks: ks.clone(),
            mode: mode.clone(),
            config,
            ingest,
            reused_items,
            hearth_latency: Latency::of(&lat),
            bm25_latency,
            memory_tokens,
            // Probed under the first config only.
            small_talk: if c == 0 {
                small_talk
            } else {
                SmallTalkCount::default()
            },
        })
        .collect();
    reports.extend(assisted_report);
    Ok(reports)
}

/// Items as window events: an assistant turn is the agent's reply, any other speaker's turn is
/// an input from that speaker. The item id rides in the event id, so recalled events map back
/// to items. Items of one session share its time in some sets; each is placed one millisecond
/// after the previous one of its session so their order survives.
fn to_events(corpus: &[CorpusItem]) -> Vec<ContextEvent> {
    let mut position: HashMap<&str, i64> = HashMap::new();
    corpus
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let pos = position.entry(item.session.as_str()).or_insert(0);
            let base = item
                .time
                .as_deref()
                .and_then(parse_iso8601)
                .unwrap_or(i as i64 * 1000);
            let timestamp_ms = base + *pos;
            *pos += 1;
            let mut event = if item.speaker == "assistant" || item.speaker == AGENT_SOURCE {
                ContextEvent::new(timestamp_ms, AGENT_SOURCE, "").with_response(item.text.clone())
            } else {
                ContextEvent::new(timestamp_ms, item.speaker.clone(), item.text.clone())
            };
            event.id = item.id.clone();
            event
        })
        .collect()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A private directory under the system temp dir, removed on drop.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> Result<Self, RecallBenchError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("hearth-recall-bench-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|source| RecallBenchError::Io {
            path: dir.clone(),
            source,
        })?;
        Ok(Self(dir))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
