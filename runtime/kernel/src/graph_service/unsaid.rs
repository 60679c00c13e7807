//! A forgotten fact's words taken out of `memory.db` too, so recall cannot bring the sentence
//! back on the next turn.
//!
//! The forget commits in `graph.db` with a note of each sentence no fact holds any more and the
//! turn it was said in (`hearth_graph::Unsaid`). The words are then taken out of the window,
//! cold context and the journal of those turns in the store's open group
//! ([`ColdContext::redact`]), and the forget is answered once that group has committed. Only
//! then are the notes marked done. A commit that fails, or a process killed between the two
//! files' commits, leaves the notes: they are taken out again at the next idle moment (outside
//! a group, where each write commits itself) and the redaction, which finds nothing the second
//! time, is never done twice. The next idle moment after a committed redaction also truncates
//! `memory.db`'s WAL, whose frames still hold the pages as they were: with the rewritten rows'
//! freed space zeroed and the keyword index's old terms deleted at once, the words are then in
//! no byte of the store's files.

use std::sync::Arc;
use std::time::Duration;

use hearth_engine::duration_ms;

use hearth_memory::{ColdContext, Redacted, Redaction};
use parking_lot::Mutex;
use serde_json::{Value, json};

use super::GraphMemory;
use crate::GraphMemoryError;
use crate::durable::then::Then;

/// What the commits holding redactions told, read on the owner's next step.
#[derive(Default)]
struct Settled {
    /// Notes whose redaction is committed.
    done: Vec<i64>,
    /// A commit holding a redaction failed: its notes are to be taken out again.
    failed: bool,
}

/// The notes of forgotten words on their way out of `memory.db`.
#[derive(Default)]
pub(super) struct Unsaying {
    settled: Arc<Mutex<Settled>>,
    /// Notes may wait for an idle moment (left by an earlier run, or a failed commit).
    due: bool,
    /// Checkpoints of `memory.db` still to try before its WAL no longer holds the pages as
    /// they were before a committed redaction (0: none due).
    scrubs_left: u8,
    /// After a failed attempt (a full disk, say), the next waits this long (zero: no failure
    /// since the last success) ...
    backoff: Duration,
    /// ... from this instant (Unix ms).
    not_before_ms: i64,
}

/// The first wait after a failed attempt to take words out; doubled on each failure after it.
const RETRY_FIRST: Duration = Duration::from_secs(1);
/// The longest wait between attempts.
const RETRY_MAX: Duration = Duration::from_secs(300);

/// Times an idle step tries to truncate `memory.db`'s WAL after a redaction while a reader
/// keeps it from completing, before leaving it to the store's own checkpoints.
const SCRUB_TRIES: u8 = 8;

/// A redaction made in the open group: what to tell the caller, and what to do at its commit.
pub(crate) struct WordsOut {
    /// The rows rewritten, for the answer.
    pub(crate) words: Value,
    /// Told the commit's outcome: marks the notes done, or due again.
    pub(crate) settle: Then,
}

impl Unsaying {
    /// An earlier run may have left notes (killed between the two files' commits): the first
    /// idle step looks, and finding none is done.
    pub(super) fn at_start() -> Self {
        Self {
            due: true,
            ..Self::default()
        }
    }
}

impl GraphMemory {
    /// Whether an idle step has notes to take out or to mark done.
    pub(crate) fn unsaid_due(&self) -> bool {
        let s = self.unsaying.settled.lock();
        self.unsaying.due || self.unsaying.scrubs_left > 0 || s.failed || !s.done.is_empty()
    }

    /// How long until an idle step has notes to take out or mark done (`None`: nothing to
    /// do): at once, unless the last attempt failed and its backoff is not over.
    pub(crate) fn unsaid_wait(&self, now_ms: i64) -> Option<Duration> {
        self.unsaid_due().then(|| {
            let left = self.unsaying.not_before_ms.saturating_sub(now_ms).max(0);
            Duration::from_millis(left as u64)
        })
    }

    /// Notes a failed attempt: the next waits twice as long as the last, up to [`RETRY_MAX`].
    fn back_off(&mut self, now_ms: i64) {
        let u = &mut self.unsaying;
        u.backoff = if u.backoff.is_zero() {
            RETRY_FIRST
        } else {
            (u.backoff * 2).min(RETRY_MAX)
        };
        u.not_before_ms = now_ms.saturating_add(duration_ms(u.backoff));
    }

    /// Takes the words of every pending note out of `memory.db` in the open group; `None`
    /// without a graph or notes. The caller answers the forget from [`WordsOut::settle`]'s commit.
    pub(crate) fn unsay_in_group(
        &mut self,
        cold: &mut ColdContext,
    ) -> Result<Option<WordsOut>, GraphMemoryError> {
        self.settle_unsaid();
        let pending = self.redact_pending(cold);
        // Whatever this group rewrote stays in it; what it could not is done again later.
        self.unsaying.due |= pending.is_err();
        let Some((ids, redacted)) = pending? else {
            return Ok(None);
        };
        let settled = Arc::clone(&self.unsaying.settled);
        Ok(Some(WordsOut {
            words: words_json(&redacted),
            settle: Box::new(move |committed| {
                let mut s = settled.lock();
                match committed {
                    Ok(()) => s.done.extend(ids),
                    Err(_) => s.failed = true,
                }
            }),
        }))
    }

    /// Forgets the facts only turn `turn_id` (none: `""`) and its cold items `items` told,
    /// the user having removed them — those its items gave and those a tool committed while
    /// serving it — in one transaction of the graph; `None` without a graph or anything to
    /// forget. The facts as `[{id, removed}]`.
    pub(crate) fn forget_told(
        &mut self,
        turn_id: &str,
        items: &[i64],
    ) -> Result<Option<Value>, GraphMemoryError> {
        let Some(graph) = self.store.as_mut() else {
            return Ok(None);
        };
        if turn_id.is_empty() && items.is_empty() {
            return Ok(None);
        }
        let gone = graph.forget_turn_and_items(turn_id, items)?;
        let told_in = if turn_id.is_empty() {
            let items: Vec<String> = items.iter().map(|i| format!("c{i}")).collect();
            format!("entry {}", items.join(", "))
        } else {
            format!("turn {turn_id}")
        };
        Ok(Some(audited(&gone, &told_in)))
    }

    /// Asks the idle steps to truncate `memory.db`'s WAL once the open group has committed: a
    /// forgotten turn's rows are gone from the file, but the log still holds its pages as
    /// they were.
    pub(crate) fn scrub_after_commit(&mut self) {
        self.unsaying.scrubs_left = SCRUB_TRIES;
    }

    /// Marks done what committed redactions took out (`graph.db` commits on its own), and
    /// takes note of a failed one.
    pub(crate) fn settle_unsaid(&mut self) {
        let Some(graph) = self.store.as_mut() else {
            return;
        };
        let (done, failed) = {
            let mut s = self.unsaying.settled.lock();
            (std::mem::take(&mut s.done), std::mem::take(&mut s.failed))
        };
        self.unsaying.due |= failed;
        if done.is_empty() {
            return;
        }
        self.unsaying.scrubs_left = SCRUB_TRIES;
        if let Err(e) = graph.unsaid_done(&done) {
            // Left as notes: taken out again later, which finds nothing to change.
            tracing::warn!("forgotten words not marked done: {e}");
            self.unsaying.due = true;
        }
    }

    /// Outside a group: truncates `memory.db`'s WAL, whose frames still hold the pages as they
    /// were before a committed redaction. A reader in the way is waited out a few idle steps.
    fn scrub_store(&mut self, cold: &mut ColdContext) {
        if self.unsaying.scrubs_left == 0 {
            return;
        }
        match cold.journal_store().checkpoint() {
            Ok(()) => self.unsaying.scrubs_left = 0,
            Err(e) => {
                self.unsaying.scrubs_left -= 1;
                if self.unsaying.scrubs_left == 0 {
                    tracing::warn!(
                        "the memory store's log still holds forgotten words until its next checkpoint: {e}"
                    );
                }
            }
        }
    }

    /// Outside a group, where each write commits itself: takes out the pending notes' words
    /// and marks them done at once.
    pub(crate) fn unsay_idle(&mut self, cold: &mut ColdContext, now_ms: i64) {
        self.settle_unsaid();
        if !self.unsaying.due {
            self.scrub_store(cold);
            return;
        }
        if now_ms < self.unsaying.not_before_ms {
            return;
        }
        match self.redact_pending(cold) {
            Ok(None) => {
                self.unsaying.due = false;
                self.unsaying.backoff = Duration::ZERO;
            }
            Ok(Some((ids, redacted))) => {
                tracing::info!(
                    target: "audit",
                    cold = redacted.cold_entries.len(),
                    window = redacted.window_events,
                    journal = redacted.journal_entries,
                    "forgotten words taken out of the memory store"
                );
                self.unsaying.settled.lock().done.extend(ids);
                self.unsaying.due = false;
                self.unsaying.backoff = Duration::ZERO;
                self.settle_unsaid();
                self.scrub_store(cold);
            }
            Err(e) => {
                self.back_off(now_ms);
                tracing::warn!(
                    retry_in_secs = self.unsaying.backoff.as_secs(),
                    "forgotten words not taken out yet: {e}"
                );
            }
        }
    }

    /// Redacts every pending note's words; their ids and what was rewritten.
    fn redact_pending(
        &mut self,
        cold: &mut ColdContext,
    ) -> Result<Option<(Vec<i64>, Redacted)>, GraphMemoryError> {
        let Some(graph) = self.store.as_ref() else {
            return Ok(None);
        };
        let notes = graph.unsaid()?;
        if notes.is_empty() {
            return Ok(None);
        }
        let redactions: Vec<Redaction> = notes
            .iter()
            .map(|n| Redaction {
                turn_id: n.turn_id.clone(),
                cold_item: n.cold_item,
                words: n.sentence.clone(),
                scope: n.scope,
            })
            .collect();
        let redacted = cold.redact(&redactions).map_err(|e| {
            GraphMemoryError::WordsKept(format!("the memory store could not rewrite them: {e}"))
        })?;
        Ok(Some((notes.iter().map(|n| n.id).collect(), redacted)))
    }
}

/// The rows the words were taken out of, as a forget's answer shows them.
fn words_json(r: &Redacted) -> Value {
    json!({
        "cold_entries": r.cold_entries.len(),
        "window_events": r.window_events,
        "journal_entries": r.journal_entries,
    })
}

/// The facts `gone` as `[{id, removed}]`, each noted in the audit log as forgotten with what it
/// was told in (`told_in`: the entry or the turn the user removed).
fn audited(gone: &[hearth_graph::Forgotten], told_in: &str) -> Value {
    for f in gone {
        tracing::info!(
            target: "audit",
            id = %f.id,
            fact = %f.fact,
            told_in,
            "memory fact forgotten with what it was told in"
        );
    }
    Value::Array(
        gone.iter()
            .map(|f| json!({"id": f.id.to_string(), "removed": f.fact}))
            .collect(),
    )
}
