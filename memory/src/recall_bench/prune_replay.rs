//! The prune benchmark: what the model still sees of a long history when a question comes at
//! its end.
//!
//! Each corpus is replayed through the working window as the daemon would see it, at the
//! production limits (`PruneLimits` of the default configuration and the memory service's
//! budget): every turn is appended, and before each turn of a person the window is pruned for
//! that turn's words, the pruned events archived to cold context. After the last turn each
//! question is asked: a question's evidence is *seen* when it is among the window events a
//! prune for the question keeps (L1) or in the memory block injected for it (recalled from
//! L2). The baseline keeps the newest events, as many as the window holds, and recalls nothing.

use std::collections::HashMap;

use super::{AGENT_SOURCE, CorpusItem, RecallBenchError, RecallSet, ScratchDir};
use super::{PromptShape, ReuseStats, TokenStats, now_ms, to_events};
use crate::recall::{ColdContext, RecallConfig, parse_iso8601};
use crate::{
    DEFAULT_MAX_CONTEXT_SIZE, DEFAULT_PROTECTED_COUNT, MemoryModels, PruneLimits, PruneSettings,
    Store, compute_token_budget, estimate_tokens, line_tokens,
};

/// What the prune benchmark measured on one set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PruneReport {
    pub name: String,
    /// Questions scored.
    pub questions: usize,
    /// Turns replayed.
    pub items: usize,
    /// Prunes run during the replay.
    pub prunes: usize,
    /// Window events a prune keeps at the end (the median over questions).
    pub window_events: usize,
    /// Fraction of questions with evidence in the kept window.
    pub in_window: f64,
    /// Fraction with evidence in the injected block.
    pub injected: f64,
    /// Fraction with evidence in either: what the model sees.
    pub seen: f64,
    /// Fraction with evidence among the newest `window_events` turns (the baseline).
    pub newest: f64,
    /// Tokens injected per question.
    pub inject_tokens: TokenStats,
    /// The share of the window's limit a prune frees beyond it, so the next prunes wait (0:
    /// every turn past the limit prunes one event).
    pub slack: f64,
    /// How much of each person's turn's prompt the turn before already held.
    pub reuse: ReuseStats,
    /// The model's window the budget was computed for, in tokens.
    pub window: usize,
}

impl PruneReport {
    /// The report as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.name,
            "questions": self.questions,
            "items": self.items,
            "prunes": self.prunes,
            "window_events": self.window_events,
            "in_window": self.in_window,
            "injected": self.injected,
            "seen": self.seen,
            "newest": self.newest,
            "inject_tokens": self.inject_tokens.to_json(),
            "slack": self.slack,
            "window": self.window,
            "prompt_reuse": {
                "turns": self.reuse.turns,
                "share_block_first": self.reuse.shares().0,
                "share_block_last": self.reuse.shares().1,
                "read_again_block_first": TokenStats::of(&self.reuse.read_first).to_json(),
                "read_again_block_last": TokenStats::of(&self.reuse.read_last).to_json(),
            },
        })
    }

    /// A short plain-text table.
    pub fn render(&self) -> String {
        format!(
            "prune benchmark {:?}: {} turns replayed ({} prunes) at a {}-token window, {} questions \
             asked at the end\n\
             evidence seen by the model   {:>6.3}   (in the window {:.3}, injected {:.3})\n\
             keep the newest {:<3} turns    {:>6.3}\n\
             injected tokens per query    p50 {} / p95 {} / max {}\n\
             prompt reused from the turn before, {} turns (prune slack {}): block first {:.3} \
             (read again p50 {} / p95 {} tokens), block last {:.3} (p50 {} / p95 {})\n",
            self.name,
            self.items,
            self.prunes,
            self.window,
            self.questions,
            self.seen,
            self.in_window,
            self.injected,
            self.window_events,
            self.newest,
            self.inject_tokens.p50,
            self.inject_tokens.p95,
            self.inject_tokens.max,
            self.reuse.turns,
            self.slack,
            self.reuse.shares().0,
            TokenStats::of(&self.reuse.read_first).p50,
            TokenStats::of(&self.reuse.read_first).p95,
            self.reuse.shares().1,
            TokenStats::of(&self.reuse.read_last).p50,
            TokenStats::of(&self.reuse.read_last).p95,
        )
    }
}

/// The window one prune replay runs at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PruneArm {
    /// The share of the window's limit a prune frees beyond it (`prune_slack`).
    pub slack: f64,
    /// The model's window in tokens (0: undeclared, the budget's
    /// [`DEFAULT_MAX_CONTEXT_TOKENS`](crate::DEFAULT_MAX_CONTEXT_TOKENS)).
    pub window: usize,
}

/// Replays every corpus of `set` that has questions, with `models` and `config`, through the
/// window `arm` describes.
pub fn run_prune(
    set: &RecallSet,
    models: &MemoryModels,
    config: &RecallConfig,
    arm: PruneArm,
    progress: &mut dyn FnMut(&str),
) -> Result<PruneReport, RecallBenchError> {
    let PruneArm { slack, window } = arm;
    let budget = compute_token_budget(window, "");
    let mut report = PruneReport {
        name: set.name.clone(),
        slack,
        window: budget.max_context,
        ..PruneReport::default()
    };
    let (mut in_window, mut injected, mut seen, mut newest) = (0, 0, 0, 0);
    let mut tokens = Vec::new();
    let mut window_sizes = Vec::new();
    for (corpus_id, corpus) in &set.corpora {
        let questions = set.scored_questions(corpus_id);
        if questions.is_empty() {
            continue;
        }
        let scratch = ScratchDir::new()?;
        let store = Store::open(scratch.path().join("memory.db"))?;
        let mut cold = ColdContext::new(store, models.dense.clone()).with_config(config.clone());
        if let Some(companion) = &models.companion {
            cold = cold.with_companion(companion.clone());
        }
        let replay = Replay {
            context_tokens: budget.context_tokens,
            memory_tokens: budget.memory_tokens,
            slack,
        };
        report.prunes += replay.run(&mut cold, corpus, &mut report.reuse)?;
        report.items += corpus.len();
        let position: HashMap<&str, usize> = corpus
            .iter()
            .enumerate()
            .map(|(i, item)| (item.id.as_str(), i))
            .collect();
        for q in &questions {
            let asked = q
                .time
                .as_deref()
                .and_then(parse_iso8601)
                .unwrap_or_else(now_ms);
            let limits = limits(&cold, budget.context_tokens)?;
            let kept = cold.prune_keeps(&q.text, limits.top_k, limits.protected)?;
            let injection = cold.inject(&q.text, budget.memory_tokens, asked)?;
            let wanted = |id: &str| q.evidence.iter().any(|e| e == id);
            let w = kept.iter().any(|e| wanted(&e.id));
            let i = injection.event_ids.iter().any(|id| wanted(id));
            let tail = corpus.len().saturating_sub(kept.len());
            let n = q
                .evidence
                .iter()
                .filter_map(|e| position.get(e.as_str()))
                .any(|&p| p >= tail);
            in_window += usize::from(w);
            injected += usize::from(i);
            seen += usize::from(w || i);
            newest += usize::from(n);
            tokens.push(estimate_tokens(&injection.block));
            window_sizes.push(kept.len());
            report.questions += 1;
        }
        if report.questions % 50 < questions.len() {
            progress(&format!(
                "prune: {} questions, evidence seen {:.3}",
                report.questions,
                seen as f64 / report.questions as f64
            ));
        }
    }
    let n = report.questions.max(1) as f64;
    report.in_window = in_window as f64 / n;
    report.injected = injected as f64 / n;
    report.seen = seen as f64 / n;
    report.newest = newest as f64 / n;
    report.inject_tokens = TokenStats::of(&tokens);
    window_sizes.sort_unstable();
    report.window_events = window_sizes
        .get(window_sizes.len() / 2)
        .copied()
        .unwrap_or(0);
    Ok(report)
}

/// The production limits for the window as it is now.
fn limits(cold: &ColdContext, context_tokens: usize) -> Result<PruneLimits, RecallBenchError> {
    let stats = cold.store().events_stats()?;
    Ok(PruneLimits::compute(
        DEFAULT_MAX_CONTEXT_SIZE,
        DEFAULT_PROTECTED_COUNT,
        context_tokens,
        stats.tokens,
        stats.events as usize,
    ))
}

/// How a replay feeds a corpus through the window.
struct Replay {
    context_tokens: usize,
    memory_tokens: usize,
    slack: f64,
}

impl Replay {
    /// Feeds `corpus` through the window: before each person's turn the window is pruned for
    /// its words when it holds more than the limits keep (down to `slack` of them fewer), as the memory
    /// service does on each input, and the prompt's shape is compared with the turn before's
    /// into `reuse`. Returns how many prunes ran.
    fn run(
        &self,
        cold: &mut ColdContext,
        corpus: &[CorpusItem],
        reuse: &mut ReuseStats,
    ) -> Result<usize, RecallBenchError> {
        let mut prunes = 0;
        let mut previous: Option<PromptShape> = None;
        for (item, event) in corpus.iter().zip(to_events(corpus)) {
            if event.source != AGENT_SOURCE {
                // The memory service's own prune, at the production limits.
                let settings = PruneSettings {
                    max_context_size: DEFAULT_MAX_CONTEXT_SIZE,
                    protected: DEFAULT_PROTECTED_COUNT,
                    context_tokens: self.context_tokens,
                    slack: self.slack,
                };
                if cold
                    .prune_past_limits(&item.text, settings, event.timestamp_ms)?
                    .is_some()
                {
                    prunes += 1;
                }
                let shape = self.shape(cold, &item.text, event.timestamp_ms)?;
                if let Some(previous) = &previous {
                    reuse.add(&shape, previous);
                }
                previous = Some(shape);
            }
            cold.append(vec![event])?;
        }
        Ok(prunes)
    }

    /// What the prompt for `query` holds besides the fixed part and the input.
    fn shape(
        &self,
        cold: &mut ColdContext,
        query: &str,
        now: i64,
    ) -> Result<PromptShape, RecallBenchError> {
        let injection = cold.inject(query, self.memory_tokens, now)?;
        let window = cold
            .store()
            .events_window()?
            .into_iter()
            .map(|e| (e.id, line_tokens(&e.record.event)))
            .collect();
        Ok(PromptShape {
            block: injection.event_ids,
            block_tokens: estimate_tokens(&injection.block),
            window,
        })
    }
}
