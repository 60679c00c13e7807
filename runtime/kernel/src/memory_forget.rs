//! Forgetting at a user's request, on the store's owner thread: a fact by its id (the graph
//! tools, `hearth memory forget`), a cold entry by its id (`memory.forget`, the web page's
//! memory browser) or a turn still in the working window by its id (`hearth memory forget
//! w12`). Either way what the user asked to forget leaves every place Hearth keeps
//! it — the graph, the turn's rows in `memory.db` — and the caller is answered once the store's
//! group holding the change has committed (see `graph_service::unsaid`).

use crossbeam_channel::Sender;
use hearth_memory::ColdContext;
use serde_json::{Value, json};

use crate::GraphMemoryError;
use crate::durable::then::{Then, answer_at_commit};
use crate::error::MemoryError;
use crate::graph_service::GraphMemory;
use crate::recalled::ENTRY_PREFIX;

/// How a turn still in the working window is written (`w12`, its window row), beside a
/// remembered entry's `c45`.
pub const WINDOW_PREFIX: &str = "w";

/// A remembered exchange a user may take back: a cold entry, or a window event not yet moved
/// to cold context. Either way its whole turn goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryRef {
    /// A cold entry (`c45`).
    Cold(i64),
    /// A window event (`w12`).
    Window(i64),
}

impl EntryRef {
    /// `c45` or `w12`; `None` for anything else (a fact's `r12`, a typo).
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let number = |rest: &str| rest.parse::<i64>().ok().filter(|n| *n > 0);
        if let Some(rest) = text.strip_prefix(ENTRY_PREFIX) {
            number(rest).map(Self::Cold)
        } else {
            number(text.strip_prefix(WINDOW_PREFIX)?).map(Self::Window)
        }
    }
}

impl std::fmt::Display for EntryRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Cold(id) => write!(f, "{ENTRY_PREFIX}{id}"),
            Self::Window(id) => write!(f, "{WINDOW_PREFIX}{id}"),
        }
    }
}

/// Answers a fact's forget once its words are out of the memory store too: taken out in the
/// open group, answered after its commit.
pub(crate) fn answer_forget(
    graph: &mut GraphMemory,
    cold: &mut ColdContext,
    mut answer: Value,
    reply: Sender<Result<Value, GraphMemoryError>>,
    after: &mut Vec<Then>,
) {
    match with_words_out(graph, cold, &mut answer) {
        Ok(settle) => after.push(then_answer(
            settle,
            answer_at_commit(reply, Ok(answer), GraphMemoryError::WordsKept),
        )),
        Err(e) => {
            tracing::warn!("a forget's words are still in the memory store: {e}");
            let _ = reply.send(Err(e));
        }
    }
}

/// Removes `entry` with the rest of its turn (`ColdContext::forget_entry`,
/// `ColdContext::forget_window_event`), forgets the facts only that turn told — distilled from
/// its entries, or committed by a tool while it was served — (their words leave whatever else
/// still holds them, as a fact's forget takes them out), and answers `{forgotten, entries,
/// facts_forgotten, …}` after the commit. A graph that fails leaves the entries removed: the
/// answer says what the graph could not do.
pub(crate) fn forget_entry(
    graph: &mut GraphMemory,
    cold: &mut ColdContext,
    entry: EntryRef,
    reply: Sender<Result<Value, MemoryError>>,
    after: &mut Vec<Then>,
) {
    let gone = match entry {
        EntryRef::Cold(id) => cold.forget_entry(id),
        EntryRef::Window(id) => cold.forget_window_event(id),
    };
    let gone = match gone {
        Ok(gone) => gone,
        Err(e) => {
            let _ = reply.send(Err(e.into()));
            return;
        }
    };
    let mut answer = json!({
        "forgotten": gone.forgot_anything(),
        "entries": gone.cold_entries,
        "window_events": gone.window_events,
        "journal_entries": gone.journal_entries,
    });
    let mut facts = Vec::new();
    let mut told: Vec<_> = gone
        .cold_entries
        .iter()
        .map(|&item| graph.forget_cold_item(item))
        .collect();
    told.push(graph.forget_turn(&gone.turn));
    for result in told {
        match result {
            Ok(Some(Value::Array(some))) => facts.extend(some),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(%entry, "the facts of a forgotten memory entry stay: {e}");
                answer["facts_error"] = json!(e.to_string());
            }
        }
    }
    answer["facts_forgotten"] = Value::Array(facts);
    if gone.forgot_anything() {
        graph.scrub_after_commit();
    }
    let settle = with_words_out(graph, cold, &mut answer).unwrap_or_else(|e| {
        tracing::warn!("a forgotten entry's words are still in the memory store: {e}");
        answer["words_error"] = json!(e.to_string());
        Box::new(|_| {})
    });
    after.push(then_answer(
        settle,
        answer_at_commit(reply, Ok(answer), MemoryError::NotStored),
    ));
}

/// Takes pending forgotten words out in the open group, noting in `answer` what was
/// rewritten; what to run at the commit.
fn with_words_out(
    graph: &mut GraphMemory,
    cold: &mut ColdContext,
    answer: &mut Value,
) -> Result<Then, GraphMemoryError> {
    let Some(out) = graph.unsay_in_group(cold)? else {
        return Ok(Box::new(|_| {}));
    };
    if let Some(map) = answer.as_object_mut() {
        map.insert("words_taken_out".into(), out.words);
    }
    Ok(out.settle)
}

/// `settle`, then `answer`, once the commit is known.
fn then_answer(settle: Then, answer: Then) -> Then {
    Box::new(move |committed| {
        settle(committed);
        answer(committed);
    })
}

#[cfg(test)]
mod tests {
    use super::EntryRef;

    #[test]
    fn an_entry_is_named_by_c_or_w_and_a_number() {
        assert_eq!(EntryRef::parse("c45"), Some(EntryRef::Cold(45)));
        assert_eq!(EntryRef::parse(" w12 "), Some(EntryRef::Window(12)));
        for bad in ["r12", "e3", "c", "w", "c-1", "w0", "c4x", "45", "", "wc1"] {
            assert_eq!(EntryRef::parse(bad), None, "{bad}");
        }
        for entry in [EntryRef::Cold(7), EntryRef::Window(9)] {
            assert_eq!(EntryRef::parse(&entry.to_string()), Some(entry));
        }
    }
}
