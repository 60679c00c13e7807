//! Scoring a ranked list against a question's evidence, and the benchmark's report.
//!
//! Definitions (the data sets' README): at turn level a question is answered at `k` when any
//! (`recall_any@k`) or all (`recall_all@k`) of its evidence items are among the top `k` returned
//! items; at session level likewise with the sessions of the evidence items, against the
//! returned items' sessions in order of first appearance (so `k` counts distinct sessions).
//! Both systems return `max(ks)` items per question and are scored on exactly those lists, so a
//! session measure at the largest `k` may see fewer than `k` distinct sessions.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use super::SmallTalkCount;
use crate::recall::RecallConfig;

/// Where a question's evidence first and fully appears in one ranked list (1-based ranks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ranks {
    /// Rank of the best-ranked evidence item.
    pub turn_any: Option<usize>,
    /// Rank by which every evidence item has appeared.
    pub turn_all: Option<usize>,
    /// Rank (among distinct sessions) of the best-ranked evidence session.
    pub session_any: Option<usize>,
    /// Rank (among distinct sessions) by which every evidence session has appeared.
    pub session_all: Option<usize>,
}

impl Ranks {
    /// Ranks of `evidence` (item numbers) in `ranked` (item numbers, best first), with
    /// `session_of` mapping an item number to its session number.
    pub fn of(ranked: &[usize], evidence: &[usize], session_of: &[usize]) -> Ranks {
        let pos = |list: &[usize], x: usize| list.iter().position(|&y| y == x).map(|p| p + 1);
        let turn: Vec<Option<usize>> = evidence.iter().map(|&e| pos(ranked, e)).collect();
        let mut sessions: Vec<usize> = Vec::new();
        for &item in ranked {
            let s = session_of[item];
            if !sessions.contains(&s) {
                sessions.push(s);
            }
        }
        let mut wanted: Vec<usize> = evidence.iter().map(|&e| session_of[e]).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let session: Vec<Option<usize>> = wanted.iter().map(|&s| pos(&sessions, s)).collect();
        let any = |v: &[Option<usize>]| v.iter().flatten().min().copied();
        let all = |v: &[Option<usize>]| {
            if v.is_empty() || v.iter().any(Option::is_none) {
                None
            } else {
                v.iter().flatten().max().copied()
            }
        };
        Ranks {
            turn_any: any(&turn),
            turn_all: all(&turn),
            session_any: any(&session),
            session_all: all(&session),
        }
    }
}

/// Query latency of one system over all questions.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Latency {
    pub p50: Duration,
    pub p99: Duration,
    pub mean: Duration,
}

impl Latency {
    /// Nearest-rank percentiles of `samples` (zero when there are none).
    pub fn of(samples: &[Duration]) -> Latency {
        if samples.is_empty() {
            return Latency::default();
        }
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        let at = |p: f64| {
            let rank = (p * sorted.len() as f64).ceil() as usize;
            sorted[rank.clamp(1, sorted.len()) - 1]
        };
        Latency {
            p50: at(0.50),
            p99: at(0.99),
            mean: sorted.iter().sum::<Duration>() / sorted.len() as u32,
        }
    }
}

/// Both systems' outcome on one question.
#[derive(Clone, Debug, PartialEq)]
pub struct QuestionResult {
    pub id: String,
    pub category: String,
    pub hearth: Ranks,
    pub bm25: Ranks,
    /// `estimate_tokens` of the memory block injected for the question (0: none).
    pub inject_tokens: usize,
    /// The same block counted by a real tokenizer (`None`: no tokenizer installed).
    pub inject_model_tokens: Option<usize>,
    /// Whether an evidence item is in that block: the turn the model would see.
    pub injected_evidence: bool,
}

/// Tokens injected per question.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenStats {
    pub p50: usize,
    pub p95: usize,
    pub max: usize,
}

impl TokenStats {
    /// Nearest-rank percentiles of `samples` (zero when there are none).
    pub fn of(samples: &[usize]) -> TokenStats {
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        let at = |p: f64| {
            let rank = (p * sorted.len() as f64).ceil() as usize;
            sorted
                .get(rank.clamp(1, sorted.len().max(1)) - 1)
                .copied()
                .unwrap_or(0)
        };
        TokenStats {
            p50: at(0.50),
            p95: at(0.95),
            max: sorted.last().copied().unwrap_or(0),
        }
    }

    /// `{p50, p95, max}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"p50": self.p50, "p95": self.p95, "max": self.max})
    }
}

/// Which system of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum System {
    Hearth,
    Bm25,
}

/// Which recall measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    TurnAny,
    TurnAll,
    SessionAny,
    SessionAll,
}

impl Measure {
    pub const ALL: [Measure; 4] = [
        Measure::TurnAny,
        Measure::TurnAll,
        Measure::SessionAny,
        Measure::SessionAll,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Measure::TurnAny => "turn_any",
            Measure::TurnAll => "turn_all",
            Measure::SessionAny => "session_any",
            Measure::SessionAll => "session_all",
        }
    }

    fn pick(self, r: &Ranks) -> Option<usize> {
        match self {
            Measure::TurnAny => r.turn_any,
            Measure::TurnAll => r.turn_all,
            Measure::SessionAny => r.session_any,
            Measure::SessionAll => r.session_all,
        }
    }
}

/// The result of one benchmark run: Hearth's cold-context recall and the plain BM25 baseline on
/// the same items and questions.
#[derive(Clone, Debug)]
pub struct Report {
    /// What the run varied for this report (an ablation's name; empty for a single run).
    pub label: String,
    /// The file's `name`.
    pub name: String,
    pub corpora: usize,
    pub items: usize,
    /// Questions scored (those with at least one evidence item).
    pub questions: Vec<QuestionResult>,
    /// Questions without evidence (abstention questions): nothing to score.
    pub skipped: usize,
    pub ks: Vec<usize>,
    /// The dense space used, or why there was none.
    pub mode: String,
    pub config: RecallConfig,
    /// Time to archive every item into cold context (embedding included).
    pub ingest: Duration,
    /// Items found already archived in a kept store (`store_dir`): their ingest is not timed.
    pub reused_items: usize,
    pub hearth_latency: Latency,
    pub bm25_latency: Latency,
    /// The memory budget each question's injected block was built within.
    pub memory_tokens: usize,
    /// What small talk brought into the prompt (no inputs: not probed under this config).
    pub small_talk: SmallTalkCount,
}

impl Report {
    /// Fraction of `questions` (all when `None`) answered by `system` at `k` under `measure`.
    pub fn recall_at(&self, system: System, measure: Measure, k: usize) -> f64 {
        self.recall_over(system, measure, k, |_| true)
    }

    /// As [`recall_at`](Self::recall_at) over the questions `keep` selects (by position).
    pub fn recall_over(
        &self,
        system: System,
        measure: Measure,
        k: usize,
        keep: impl Fn(usize) -> bool,
    ) -> f64 {
        let (mut hit, mut n) = (0usize, 0usize);
        for (_, q) in self.questions.iter().enumerate().filter(|(i, _)| keep(*i)) {
            n += 1;
            let ranks = match system {
                System::Hearth => &q.hearth,
                System::Bm25 => &q.bm25,
            };
            if measure.pick(ranks).is_some_and(|r| r <= k) {
                hit += 1;
            }
        }
        if n == 0 { 0.0 } else { hit as f64 / n as f64 }
    }

    /// Tokens injected per question.
    pub fn inject_tokens(&self) -> TokenStats {
        let samples: Vec<usize> = self.questions.iter().map(|q| q.inject_tokens).collect();
        TokenStats::of(&samples)
    }

    /// Injected tokens per question as a real tokenizer counts them, when one was installed.
    pub fn inject_model_tokens(&self) -> Option<TokenStats> {
        let samples: Option<Vec<usize>> = self
            .questions
            .iter()
            .map(|q| q.inject_model_tokens)
            .collect();
        samples
            .filter(|s| !s.is_empty())
            .map(|s| TokenStats::of(&s))
    }

    /// Fraction of questions whose injected block holds an evidence item.
    pub fn injected_evidence(&self) -> f64 {
        let n = self.questions.len();
        let hit = self
            .questions
            .iter()
            .filter(|q| q.injected_evidence)
            .count();
        if n == 0 { 0.0 } else { hit as f64 / n as f64 }
    }

    /// Items archived per second.
    pub fn ingest_rate(&self) -> f64 {
        (self.items - self.reused_items) as f64 / self.ingest.as_secs_f64().max(1e-9)
    }

    /// A plain-text table: every measure at every k for both systems, latency, ingest rate and
    /// a per-category breakdown of `turn_any` at the middle k.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "recall benchmark {:?}: {} items in {} corpora, {} questions ({} without evidence skipped)",
            self.name,
            self.items,
            self.corpora,
            self.questions.len(),
            self.skipped
        );
        if !self.label.is_empty() {
            let _ = writeln!(out, "variant: {}", self.label);
        }
        let _ = writeln!(out, "hearth: {}", self.mode);
        let c = &self.config;
        let _ = writeln!(
            out,
            "        fusion {} (chance margin {}), rrf k {}, depth {}, weights dense {} / keyword {}, \
             dense floor {} of the best, passages {} chars",
            c.fusion.name(),
            c.chance_margin,
            c.rrf_k,
            c.depth,
            c.dense_weight,
            c.keyword_weight,
            c.dense_relative_floor,
            c.passage_chars
        );
        let _ = writeln!(
            out,
            "        recency half-life {} d (floor {}), named time span x{}, \
             agent's words x{} / user's words x{} when asked about the agent's",
            c.recency_half_life_days,
            c.recency_floor,
            c.time_window_boost,
            c.agent_words_weight,
            c.user_words_weight
        );
        if self.reused_items == self.items {
            let _ = writeln!(
                out,
                "ingest: {} items from kept stores (not measured in this run)",
                self.items
            );
        } else {
            let _ = writeln!(
                out,
                "ingest: {} items in {:.1} s ({:.0} items/s)",
                self.items - self.reused_items,
                self.ingest.as_secs_f64(),
                self.ingest_rate()
            );
        }
        let _ = writeln!(
            out,
            "{:<16} {:>8} {:>8} {:>8}",
            "measure", "hearth", "bm25", "delta"
        );
        for measure in Measure::ALL {
            for &k in &self.ks {
                let h = self.recall_at(System::Hearth, measure, k);
                let b = self.recall_at(System::Bm25, measure, k);
                let _ = writeln!(
                    out,
                    "{:<16} {:>8.3} {:>8.3} {:>+8.3}",
                    format!("{}@{k}", measure.name()),
                    h,
                    b,
                    h - b
                );
            }
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let _ = writeln!(
            out,
            "{:<16} {:>8.2} {:>8.2}",
            "query p50 ms",
            ms(self.hearth_latency.p50),
            ms(self.bm25_latency.p50)
        );
        let _ = writeln!(
            out,
            "{:<16} {:>8.2} {:>8.2}",
            "query p99 ms",
            ms(self.hearth_latency.p99),
            ms(self.bm25_latency.p99)
        );
        let tokens = self.inject_tokens();
        let _ = writeln!(
            out,
            "injected per query (budget {}): tokens p50 {} / p95 {} / max {}; \
             evidence in the block {:.3}",
            self.memory_tokens,
            tokens.p50,
            tokens.p95,
            tokens.max,
            self.injected_evidence()
        );
        let st = &self.small_talk;
        if st.inputs > 0 {
            let (with, without) = st.per_input();
            let share = |n: usize| n as f64 / st.inputs as f64;
            let _ = writeln!(
                out,
                "small talk ({} inputs): entries injected per input {with:.2}, for {:.3} of \
                 them; the rule off, same run: {without:.2}, for {:.3}",
                st.inputs,
                share(st.inputs_with_items),
                share(st.inputs_with_items_without_rule)
            );
        }
        if let Some(model) = self.inject_model_tokens() {
            let _ = writeln!(
                out,
                "injected per query, counted by the default model's tokenizer: p50 {} / p95 {} / max {}",
                model.p50, model.p95, model.max
            );
        }
        if let Some(&k) = self.ks.get(self.ks.len() / 2) {
            let mut categories: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
            for (i, q) in self.questions.iter().enumerate() {
                categories.entry(&q.category).or_default().push(i);
            }
            if categories.len() > 1 {
                let _ = writeln!(out, "turn_any@{k} by category:");
                for (name, members) in &categories {
                    let pick = |s| {
                        self.recall_over(s, Measure::TurnAny, k, |i| {
                            members.binary_search(&i).is_ok()
                        })
                    };
                    let _ = writeln!(
                        out,
                        "  {:<28} {:>4} {:>8.3} {:>8.3}",
                        name,
                        members.len(),
                        pick(System::Hearth),
                        pick(System::Bm25)
                    );
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_the_definitions() {
        // Items 0..6; sessions: 0,0 | 1,1 | 2,2.
        let session_of = [0, 0, 1, 1, 2, 2];
        let ranked = [3, 2, 0, 5];
        let r = Ranks::of(&ranked, &[0, 2], &session_of);
        assert_eq!(r.turn_any, Some(2));
        assert_eq!(r.turn_all, Some(3));
        // Session order: 1, 0, 2.
        assert_eq!(r.session_any, Some(1));
        assert_eq!(r.session_all, Some(2));
        let r = Ranks::of(&ranked, &[1, 4], &session_of);
        assert_eq!(r.turn_any, None);
        assert_eq!(r.turn_all, None);
        assert_eq!(r.session_any, Some(2));
        assert_eq!(r.session_all, Some(3));
    }

    #[test]
    fn latency_percentiles_are_nearest_rank() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        let l = Latency::of(&samples);
        assert_eq!(l.p50, Duration::from_millis(50));
        assert_eq!(l.p99, Duration::from_millis(99));
        assert_eq!(Latency::of(&[]).p50, Duration::ZERO);
    }

    #[test]
    fn token_percentiles_are_nearest_rank() {
        let samples: Vec<usize> = (1..=20).collect();
        let t = TokenStats::of(&samples);
        assert_eq!((t.p50, t.p95, t.max), (10, 19, 20));
        assert_eq!(TokenStats::of(&[]), TokenStats::default());
    }
}
