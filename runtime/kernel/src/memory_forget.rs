//! Forgetting at a user's request, on the store's owner thread: a fact by its id (the graph
//! tools, `hearth memory forget`), a cold entry by its id (`memory.forget`, the web page's
//! memory browser) or a turn still in the working window by its id (`hearth memory forget
//! w12`). Either way what the user asked to forget leaves every place Hearth keeps
//! it — the graph, the turn's rows in `memory.db` — and the caller is answered once the store's
//! group holding the change has committed (see `graph_service::unsaid`).

use crossbeam_channel::Sender;
use hearth_memory::{ColdContext, ForgottenTurn, RecallError};
use serde_json::{Value, json};

use crate::GraphMemoryError;
use crate::durable::then::{Then, answer_at_commit};
use crate::entry_ref::EntryRef;
use crate::error::MemoryError;
use crate::graph_service::GraphMemory;

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
///
/// A turn still being answered is marked instead, in the same group, and forgotten with its
/// reply ([`forget_answered`]): the answer says `when_answered`.
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
    let answer = match gone {
        Ok(gone) => Ok(settle_turn(graph, cold, &gone, &entry.to_string(), after)),
        Err(RecallError::InFlight(turn)) => later(cold, turn),
        Err(e) => Err(e.into()),
    };
    after.push(answer_at_commit(reply, answer, MemoryError::NotStored));
}

/// Forgets turn `turn`, answered now and marked to be forgotten when it was (see
/// [`forget_entry`]), with the facts only it told; what it removed is logged, nobody waits.
pub(crate) fn forget_answered(
    graph: &mut GraphMemory,
    cold: &mut ColdContext,
    turn: &str,
    after: &mut Vec<Then>,
) {
    match cold.forget_turn(turn) {
        Ok(gone) => {
            let answer = settle_turn(graph, cold, &gone, turn, after);
            tracing::info!(turn, facts = %answer["facts_forgotten"], "turn forgotten once answered");
        }
        // The mark stays: the next start tries again.
        Err(e) => tracing::error!(turn, "a turn to forget once answered stays: {e}"),
    }
}

/// Marks in-flight turn `turn` to be forgotten when its reply is journaled: the answer a
/// forget of it gets.
fn later(cold: &mut ColdContext, turn: String) -> Result<Value, MemoryError> {
    match cold.journal_store().journal_forget_when_answered(&turn) {
        Ok(true) => Ok(json!({
            "forgotten": true,
            "when_answered": true,
            "turn": turn,
            "entries": [],
            "window_events": 0,
            "journal_entries": 0,
            "facts_forgotten": [],
        })),
        // Answered between the look and the mark cannot happen on this one thread; an entry
        // gone from the journal (trimmed) leaves nothing to mark.
        Ok(false) => Err(RecallError::InFlight(turn).into()),
        Err(e) => Err(e.into()),
    }
}

/// The graph's part of forgetting turn `gone` (named `what` in the log): the facts only it
/// told, their words out of what else holds them; the answer, with what to run at the commit
/// pushed to `after`.
fn settle_turn(
    graph: &mut GraphMemory,
    cold: &mut ColdContext,
    gone: &ForgottenTurn,
    what: &str,
    after: &mut Vec<Then>,
) -> Value {
    let mut answer = json!({
        "forgotten": gone.forgot_anything(),
        "entries": gone.cold_entries,
        "window_events": gone.window_events,
        "journal_entries": gone.journal_entries,
    });
    let facts = match graph.forget_told(&gone.turn, &gone.cold_entries) {
        Ok(Some(Value::Array(facts))) => facts,
        Ok(_) => Vec::new(),
        Err(e) => {
            tracing::warn!(what, "the facts of a forgotten memory entry stay: {e}");
            answer["facts_error"] = json!(e.to_string());
            Vec::new()
        }
    };
    answer["facts_forgotten"] = Value::Array(facts);
    if gone.forgot_anything() {
        graph.scrub_after_commit();
    }
    let settle = with_words_out(graph, cold, &mut answer).unwrap_or_else(|e| {
        tracing::warn!("a forgotten entry's words are still in the memory store: {e}");
        answer["words_error"] = json!(e.to_string());
        Box::new(|_| {})
    });
    after.push(settle);
    answer
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
