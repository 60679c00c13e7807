//! Forgetting at a user's request, on the store's owner thread: a fact by its id (the graph
//! tools, `hearth memory forget`) or a cold entry by its id (`memory.forget`, the web page's
//! memory browser). Either way what the user asked to forget leaves every place Hearth keeps
//! it — the graph, the turn's rows in `memory.db` — and the caller is answered once the store's
//! group holding the change has committed (see `graph_service::unsaid`).

use crossbeam_channel::Sender;
use hearth_memory::ColdContext;
use serde_json::{Value, json};

use crate::GraphMemoryError;
use crate::durable::then::{Then, answer_at_commit};
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

/// Removes cold entry `id` with the rest of its turn (`ColdContext::forget_entry`), forgets
/// the facts only those entries told (their words leave whatever else still holds them, as a
/// fact's forget takes them out), and answers `{forgotten, entries, facts_forgotten, …}` after
/// the commit. A graph that fails leaves the entries removed: the answer says what the graph
/// could not do.
pub(crate) fn forget_entry(
    graph: &mut GraphMemory,
    cold: &mut ColdContext,
    id: i64,
    reply: Sender<Result<Value, MemoryError>>,
    after: &mut Vec<Then>,
) {
    let gone = match cold.forget_entry(id) {
        Ok(gone) => gone,
        Err(e) => {
            let _ = reply.send(Err(e.into()));
            return;
        }
    };
    let mut answer = json!({
        "forgotten": !gone.cold_entries.is_empty(),
        "entries": gone.cold_entries,
        "window_events": gone.window_events,
        "journal_entries": gone.journal_entries,
    });
    let mut facts = Vec::new();
    for &entry in &gone.cold_entries {
        match graph.forget_cold_item(entry) {
            Ok(Some(Value::Array(some))) => facts.extend(some),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(entry, "the facts of a forgotten memory entry stay: {e}");
                answer["facts_error"] = json!(e.to_string());
            }
        }
    }
    answer["facts_forgotten"] = Value::Array(facts);
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
