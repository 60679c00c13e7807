//! Distillation: cold items (turns idle for days, rarely recalled) into facts and dated events.
//!
//! The [`RuleDistiller`] runs without a model: fixed first-person rules plus the clause
//! extractor. The model-backed distiller (`model.rs`) proposes claims the kernel asks a model
//! for; the rule one stays its fallback and the baseline it must beat. Each item is written in
//! one transaction together with its cursor row, so a crash loses or duplicates nothing; an
//! item that gave nothing stays cold and is retried later.

mod clause;
mod cursor;
mod english_object;
mod extractor;
mod model;
mod noun_phrase;
mod possession;
mod rules;
mod visit;

use hearth_memory::ColdEntry;

use crate::error::SqlContext;
use crate::store::{facts_tell_in, now_ms};
use crate::{FactSource, GraphError, GraphStore, Statement, TellReport};

pub use cursor::ItemState;
pub use hearth_memory::{ResolvedDate, resolve_date};
pub use model::{MODEL_BATCH, ModelOutcome, model_prompt, parse_model_answer};
pub use rules::USER;
pub(crate) use rules::names_the_speaker;

/// How often the kernel runs the rule distiller.
pub const RULE_TICK_MS: i64 = 10 * 60 * 1000;

/// One cold item to distill: what the user said, when, in which turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColdItem {
    /// The cold entry's id.
    pub id: i64,
    /// The turn it was said in.
    pub turn_id: String,
    /// When it was said (Unix ms).
    pub said_ms: i64,
    /// The user's words.
    pub text: String,
    /// The user's UTC offset at the time, for "yesterday" and "上周".
    pub utc_offset_secs: i64,
}

impl From<&ColdEntry> for ColdItem {
    /// The user's input of a cold entry (replies are the agent's words, not the user's facts).
    fn from(entry: &ColdEntry) -> Self {
        Self {
            id: entry.id,
            turn_id: if entry.event.id.is_empty() {
                format!("cold-{}", entry.id)
            } else {
                entry.event.id.clone()
            },
            said_ms: entry.event.timestamp_ms,
            text: entry.event.input.clone(),
            utc_offset_secs: 0,
        }
    }
}

/// Turns one cold item into statements.
pub trait Distiller {
    /// The statements `item` makes, one per sentence that says anything.
    fn statements(&self, item: &ColdItem) -> Vec<Statement>;
}

/// The model-free distiller: the fixed rules, and the clause extractor unless turned off
/// (off, it is the rules-only baseline).
#[derive(Clone, Copy, Debug)]
pub struct RuleDistiller {
    /// Whether to run the clause extractor after the rules.
    pub extractor: bool,
}

impl Default for RuleDistiller {
    fn default() -> Self {
        Self { extractor: true }
    }
}

impl Distiller for RuleDistiller {
    fn statements(&self, item: &ColdItem) -> Vec<Statement> {
        clause::clauses(&item.text, item.said_ms, item.utc_offset_secs)
            .iter()
            .filter_map(|c| {
                let mut st = rules::rule_statement(c, item.said_ms);
                if self.extractor {
                    let more = extractor::extract(c, item.said_ms);
                    let offset = st.facts.len();
                    for fact in more.facts {
                        let dup = st.facts.iter().any(|f| {
                            f.subject == fact.subject
                                && f.predicate == fact.predicate
                                && f.object == fact.object
                        });
                        if !dup {
                            st.facts.push(fact);
                        }
                    }
                    st.events.extend(more.events.into_iter().map(|mut e| {
                        e.fact = e.fact.map(|i| i + offset);
                        e
                    }));
                    st.events
                        .retain(|e| e.fact.is_none_or(|i| i < st.facts.len()));
                }
                (!st.facts.is_empty() || !st.events.is_empty()).then_some(st)
            })
            .collect()
    }
}

/// What one distillation pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DistillReport {
    /// Items looked at.
    pub items: usize,
    /// Items distilled with a result (now safe to drop from cold context).
    pub distilled: usize,
    /// Items that gave nothing: kept cold, retried later.
    pub kept_for_retry: usize,
    /// Items skipped: distilled before, or waiting for their retry time.
    pub skipped: usize,
    /// Everything written, summed over the items.
    pub facts: TellReport,
}

impl DistillReport {
    /// Whether the pass found anything new (the kernel spends no model call otherwise).
    pub fn found_anything(&self) -> bool {
        self.facts.wrote()
    }
}

impl GraphStore {
    /// Distills `items` with the [`RuleDistiller`] at the system clock's time.
    pub fn distill_items(&mut self, items: &[ColdItem]) -> Result<DistillReport, GraphError> {
        self.distill_with(&RuleDistiller::default(), items, now_ms())
    }

    /// Distills `items` with `distiller`, as of `now_ms` (for the retry schedule). Each item
    /// is one transaction: its facts, events and cursor row commit together or not at all.
    /// Items already done, or waiting for a later retry, are skipped.
    pub fn distill_with(
        &mut self,
        distiller: &dyn Distiller,
        items: &[ColdItem],
        now_ms: i64,
    ) -> Result<DistillReport, GraphError> {
        self.distill_pass(distiller, items, now_ms, false)
    }

    /// Distills `items` again even if they are done, for a distiller better than the one that
    /// ran before. What was already stored is not stored twice (provenance is per source and
    /// sentence), and what the user forgot stays forgotten.
    pub fn redistill(
        &mut self,
        distiller: &dyn Distiller,
        items: &[ColdItem],
        now_ms: i64,
    ) -> Result<DistillReport, GraphError> {
        self.distill_pass(distiller, items, now_ms, true)
    }

    fn distill_pass(
        &mut self,
        distiller: &dyn Distiller,
        items: &[ColdItem],
        now_ms: i64,
        redo: bool,
    ) -> Result<DistillReport, GraphError> {
        const OP: &str = "distill";
        let mut report = DistillReport {
            items: items.len(),
            ..DistillReport::default()
        };
        let embedder = self.embedder.clone();
        for item in items {
            let prior = cursor::state(&self.conn, &self.path, item.id)?;
            let done_before = match prior {
                Some(ItemState::Done { facts }) => Some(facts),
                _ => None,
            };
            match prior {
                Some(ItemState::Done { .. }) if !redo => {
                    report.skipped += 1;
                    continue;
                }
                Some(ItemState::Waiting { retry_ms, .. }) if retry_ms > now_ms => {
                    report.skipped += 1;
                    continue;
                }
                _ => {}
            }
            let statements = distiller.statements(item);
            let source = FactSource {
                cold_item: Some(item.id),
                turn_id: item.turn_id.clone(),
                said_ms: item.said_ms,
            };
            let tx = self.conn.transaction().ctx(OP, &self.path)?;
            let told = facts_tell_in(
                &tx,
                &self.path,
                &statements,
                &source,
                now_ms,
                embedder.as_deref(),
            )?;
            let written = told.inserted.len()
                + told.merged.len()
                + told.closed.len()
                + told.superseded.len()
                + told.events.len();
            // All of it forgotten is an answer too: retrying would only find the tombstones.
            let done = written > 0 || told.forgotten > 0 || done_before.is_some();
            let facts = (written as u64).max(done_before.unwrap_or(0));
            cursor::record(&tx, &self.path, item.id, facts, done, now_ms)?;
            tx.commit().ctx(OP, &self.path)?;
            if done {
                report.distilled += 1;
            } else {
                report.kept_for_retry += 1;
            }
            report.facts.absorb(told);
        }
        Ok(report)
    }
}

#[cfg(test)]
mod robustness_tests;
