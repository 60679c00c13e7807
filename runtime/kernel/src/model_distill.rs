//! The model-backed distiller's kernel side (SPEC §5.7, DESIGN §4.4): cold items — idle for
//! days and rarely recalled — are put to the model as one `_consolidation_` self-input at L1,
//! so the task queues behind every user input, is never preempted half-way and is cut by a
//! stop like any task. Its answer comes back on the input's reply channel, which the store's
//! owner polls between ops: the owner never waits for the model.
//!
//! The claims are read by [`hearth_graph::parse_model_answer`] (only those grounded in the
//! item's words are kept) and stored with the item as their source. An item the answer said
//! nothing about, or whose task failed, was stopped or never answered, is retried later; the
//! rule distiller's facts from the same item stand meanwhile (it is the fallback). A tick with
//! no item due submits nothing, so no token is spent when there is nothing new.

use crate::input::{InputEvent, Reply};
use crossbeam_channel::{Receiver, TryRecvError};
use hearth_engine::Sink;
use hearth_engine::duration_ms;
use hearth_graph::{
    ColdItem, GraphStore, MODEL_BATCH, MergeCandidate, merge_prompt, model_prompt,
    parse_merge_answer, parse_model_answer,
};
use hearth_memory::{COLD_MAX_ACCESS, ColdContext};
use hearth_scheduler::CRITICAL_CHANNEL;
use serde_json::{Value, json};
use std::time::Duration;

/// How often the model distiller looks for cold items when the configuration says nothing
/// (SPEC §5.7: the archive heartbeat runs hourly).
pub const DEFAULT_MODEL_INTERVAL: Duration = Duration::from_secs(3_600);
/// How often the model reviews look-alike names when the configuration says nothing (SPEC
/// §5.7: `detectEntityMerge` every 120 minutes).
pub const DEFAULT_MERGE_INTERVAL: Duration = Duration::from_secs(7_200);
/// How long an item must have gone unrecalled before the model distills it (SPEC §5.2).
pub const DEFAULT_MODEL_MIN_IDLE: Duration = Duration::from_secs(72 * 3_600);
/// An answer not back after this long is given up (the items are retried later).
const ANSWER_WAIT: Duration = Duration::from_secs(15 * 60);
/// How often the owner looks for the answer while a task is out.
const ANSWER_POLL: Duration = Duration::from_millis(200);

/// Settings of the model distiller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelDistillSettings {
    /// Between looks for cold items.
    pub interval: Duration,
    /// How long an item must have been idle.
    pub min_idle: Duration,
    /// Between reviews of look-alike names.
    pub merge_interval: Duration,
}

impl Default for ModelDistillSettings {
    fn default() -> Self {
        Self {
            interval: DEFAULT_MODEL_INTERVAL,
            min_idle: DEFAULT_MODEL_MIN_IDLE,
            merge_interval: DEFAULT_MERGE_INTERVAL,
        }
    }
}

/// What a consolidation task asks.
enum Task {
    /// Facts from these cold items.
    Distill(Vec<ColdItem>),
    /// Whether each pair of names is one person or thing.
    Merge(Vec<MergeCandidate>),
}

/// One consolidation task out with the model (one at a time).
struct Pending {
    task: Task,
    reply: Receiver<Reply>,
    since_ms: i64,
}

/// The model distiller's state on the store's owner thread.
pub(crate) struct ModelDistill {
    settings: Option<ModelDistillSettings>,
    submit: Option<Sink<InputEvent>>,
    next_tick_ms: i64,
    next_merge_ms: i64,
    pending: Option<Pending>,
    tasks: u64,
    answered: u64,
    idle_ticks: u64,
    merge_tasks: u64,
    merged: u64,
}

impl ModelDistill {
    /// Off without settings or without a kernel to submit to.
    pub(crate) fn new(
        settings: Option<ModelDistillSettings>,
        submit: Option<Sink<InputEvent>>,
        now_ms: i64,
    ) -> Self {
        let first = settings.as_ref().map_or(0, |s| duration_ms(s.interval));
        let first_merge = settings
            .as_ref()
            .map_or(0, |s| duration_ms(s.merge_interval));
        Self {
            settings: settings.filter(|_| submit.is_some()),
            submit,
            next_tick_ms: now_ms.saturating_add(first),
            next_merge_ms: now_ms.saturating_add(first_merge),
            pending: None,
            tasks: 0,
            answered: 0,
            idle_ticks: 0,
            merge_tasks: 0,
            merged: 0,
        }
    }

    /// How long until the next step is due (`None`: off).
    pub(crate) fn idle_wait(&self, now_ms: i64) -> Option<Duration> {
        self.settings.as_ref()?;
        if self.pending.is_some() {
            return Some(ANSWER_POLL);
        }
        let next = self.next_tick_ms.min(self.next_merge_ms);
        let left = next.saturating_sub(now_ms).max(0);
        Some(Duration::from_millis(left as u64))
    }

    /// Settles an answer that came back, or submits the next task when one is due.
    pub(crate) fn step(&mut self, graph: &mut GraphStore, cold: &ColdContext, now_ms: i64) {
        if self.settings.is_none() {
            return;
        }
        if let Some(pending) = self.pending.take() {
            match pending.reply.try_recv() {
                Ok(reply) => {
                    let answer = (!reply.error).then_some(reply.content);
                    self.settle(graph, &pending.task, answer.as_deref(), now_ms);
                }
                Err(TryRecvError::Empty)
                    if now_ms.saturating_sub(pending.since_ms) < duration_ms(ANSWER_WAIT) =>
                {
                    self.pending = Some(pending);
                }
                Err(_) => {
                    tracing::warn!(
                        "graph: the consolidation task gave no answer; it is asked again later"
                    );
                    self.settle(graph, &pending.task, None, now_ms);
                }
            }
            return;
        }
        let Some(settings) = self.settings.clone() else {
            return;
        };
        if now_ms >= self.next_tick_ms {
            self.next_tick_ms = now_ms.saturating_add(duration_ms(settings.interval));
            match self.due_items(graph, cold, &settings, now_ms) {
                Ok(items) if items.is_empty() => {
                    self.idle_ticks += 1;
                    tracing::debug!("graph: no cold item is due for the model; nothing asked");
                }
                Ok(items) => return self.submit(Task::Distill(items), now_ms),
                Err(e) => tracing::warn!("graph: choosing cold items for the model failed: {e}"),
            }
        }
        if now_ms >= self.next_merge_ms {
            self.next_merge_ms = now_ms.saturating_add(duration_ms(settings.merge_interval));
            match graph.merge_candidates() {
                Ok(pairs) if pairs.is_empty() => {
                    tracing::debug!("graph: no look-alike names to review; nothing asked");
                }
                Ok(pairs) => self.submit(Task::Merge(pairs), now_ms),
                Err(e) => tracing::warn!("graph: finding look-alike names failed: {e}"),
            }
        }
    }

    fn due_items(
        &self,
        graph: &GraphStore,
        cold: &ColdContext,
        settings: &ModelDistillSettings,
        now_ms: i64,
    ) -> Result<Vec<ColdItem>, crate::GraphMemoryError> {
        let store = cold.store();
        let candidates =
            store.cold_find_cold(now_ms, duration_ms(settings.min_idle), COLD_MAX_ACCESS)?;
        let mut items = Vec::new();
        // Read a few more ids than a batch: an entry with no words of the user's is passed over.
        for id in graph.model_due(&candidates, now_ms, MODEL_BATCH * 2)? {
            if items.len() == MODEL_BATCH {
                break;
            }
            if let Some(entry) = store.cold_get(id)? {
                let item = cold_item(&entry, graph);
                if !item.text.trim().is_empty() {
                    items.push(item);
                }
            }
        }
        Ok(items)
    }

    fn submit(&mut self, task: Task, now_ms: i64) {
        let Some(submit) = &self.submit else {
            return;
        };
        let (prompt, what) = match &task {
            Task::Distill(items) => (
                model_prompt(items),
                json!({"distill_items": items.iter().map(|i| i.id).collect::<Vec<_>>()}),
            ),
            Task::Merge(pairs) => {
                self.merge_tasks += 1;
                (merge_prompt(pairs), json!({"merge_pairs": pairs.len()}))
            }
        };
        let mut input = InputEvent::text(CRITICAL_CHANNEL, prompt)
            .with_output_channel(CRITICAL_CHANNEL)
            .with_payload("priority", json!("L1"))
            .with_payload("tools", json!("none"))
            .with_payload("no_memory", json!(true))
            .with_payload("consolidation", what.clone());
        let reply = input.reply_channel();
        tracing::debug!(%what, "graph: asking the model a consolidation task");
        submit.send(input);
        self.tasks += 1;
        self.pending = Some(Pending {
            task,
            reply,
            since_ms: now_ms,
        });
    }

    /// Applies what `answer` says of the task's items or pairs.
    fn settle(&mut self, graph: &mut GraphStore, task: &Task, answer: Option<&str>, now_ms: i64) {
        match task {
            Task::Distill(items) => self.settle_items(graph, items, answer, now_ms),
            Task::Merge(pairs) => {
                // No answer decides nothing: the pairs are proposed again at the next review.
                let Some(text) = answer else { return };
                self.answered += 1;
                let decisions = parse_merge_answer(text, pairs.len());
                match graph.settle_merges(pairs, &decisions) {
                    Ok(review) => {
                        self.merged += review.merged.len() as u64;
                        for (source, target) in &review.merged {
                            tracing::info!(target: "audit", %source, %target, "memory entities merged by review");
                        }
                        tracing::info!(
                            merged = review.merged.len(),
                            kept_apart = review.kept_apart,
                            "graph: merge review settled"
                        );
                    }
                    Err(e) => tracing::warn!("graph: applying the merge review failed: {e}"),
                }
            }
        }
    }

    /// Stores what `answer` says of each item and records every item's attempt.
    fn settle_items(
        &mut self,
        graph: &mut GraphStore,
        items: &[ColdItem],
        answer: Option<&str>,
        now_ms: i64,
    ) {
        let (mut claims, ungrounded) = match answer {
            Some(text) => {
                self.answered += 1;
                parse_model_answer(text, items)
            }
            None => Default::default(),
        };
        let (mut done, mut inserted) = (0, 0);
        for (index, item) in items.iter().enumerate() {
            let statements = claims.remove(&index).unwrap_or_default();
            match graph.record_model(item, &statements, now_ms) {
                Ok(outcome) => {
                    done += usize::from(outcome.done);
                    inserted += outcome.told.inserted.len();
                }
                Err(e) => tracing::warn!(
                    item = item.id,
                    "graph: storing the model's claims failed: {e}"
                ),
            }
        }
        tracing::info!(
            items = items.len(),
            done,
            inserted,
            ungrounded,
            answered = answer.is_some(),
            "graph: model distillation settled"
        );
    }

    /// The distiller's state for `memory_introspect` and `hearth memory stats`.
    pub(crate) fn stats(&self, graph: &GraphStore) -> Value {
        let Some(settings) = &self.settings else {
            return json!({"on": false});
        };
        let (done, waiting) = graph.model_counts().unwrap_or_default();
        json!({
            "on": true,
            "interval_ms": duration_ms(settings.interval),
            "min_idle_ms": duration_ms(settings.min_idle),
            "tasks": self.tasks,
            "answered": self.answered,
            "pending": self.pending.as_ref().map(|p| match &p.task {
                Task::Distill(items) => json!({"distill": items.len()}),
                Task::Merge(pairs) => json!({"merge": pairs.len()}),
            }),
            "idle_ticks": self.idle_ticks,
            "items_done": done,
            "items_waiting": waiting,
            "merge_interval_ms": duration_ms(settings.merge_interval),
            "merge_tasks": self.merge_tasks,
            "merged": self.merged,
        })
    }
}

/// The source of a note stored with `doc_commit`: its words are kept as the event's response
/// (the summary is its input), which the distillers read instead.
pub(crate) const NOTE_SOURCE: &str = "manual";

/// The user's words of a cold entry, their time words reckoned in the graph's zone (the
/// user's) as it was when they were said; a note stored with `doc_commit` keeps them in its
/// response, so that is read too.
pub(crate) fn cold_item(entry: &hearth_memory::ColdEntry, graph: &GraphStore) -> ColdItem {
    let mut item = ColdItem::from(entry);
    item.utc_offset_secs = graph.zone().offset_at(entry.event.timestamp_ms);
    if entry.event.source == NOTE_SOURCE && !entry.event.response.is_empty() {
        item.text = entry.event.response.clone();
    }
    item
}
