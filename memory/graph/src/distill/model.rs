//! The model-backed distiller's store side: which cold items are due for the model, the prompt
//! the kernel sends it as a `_consolidation_` self-input, how its answer is read back, and the
//! record of each attempt.
//!
//! The model only proposes. Its answer is one claim per line, `<n> | subject | predicate |
//! object`, where `n` numbers the item in the prompt; a claim is kept only if it is grounded in
//! that item's words (its object, and a subject other than the speaker, appear in them), so a
//! small local model's invention never becomes a fact. An item whose attempt gave nothing (or
//! whose task failed or was stopped) is retried later with a growing pause, exactly like the
//! rule distiller's; nothing here deletes a cold item.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::ColdItem;
use super::cursor::retry_after;
use super::rules::names_the_speaker;
use crate::error::SqlContext;
use crate::name::validate_predicate;
use crate::store::facts_tell_in;
use crate::{
    Fact, FactMode, FactSource, GraphError, GraphStore, Statement, TellReport, USER, validate_name,
};

/// Items one consolidation task asks the model about: few, so the task is short and a user's
/// input waits little behind it.
pub const MODEL_BATCH: usize = 6;
/// An item's words shown to the model are cut at this many characters.
const ITEM_CHARS: usize = 600;
/// Claims read from one answer, at most.
const MAX_CLAIMS: usize = 64;

/// What one model attempt on one item did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelOutcome {
    /// Claims kept (grounded and valid), before the graph merged or refused them.
    pub claims: usize,
    /// What the graph wrote.
    pub told: TellReport,
    /// Whether the item is done for the model: it gave grounded claims (new, known or
    /// forgotten ones).
    pub done: bool,
}

/// The consolidation task's text for `items` (numbered from 1). English, because the answer's
/// format is what matters and small models follow English instructions best; the items keep
/// their own language and so do the names taken from them.
pub fn model_prompt(items: &[ColdItem]) -> String {
    let mut out = String::from(
        "Memory consolidation task. Extract lasting facts about people from the numbered \
         messages below (the speaker is \"user\"). Answer with one fact per line and nothing \
         else, as: number | subject | predicate | object\n\
         The predicate is a short lower-case identifier such as lives_in, works_at, job, age, \
         likes, dislikes, has, visited, knows, speaks, from, studies_at, married_to, name. \
         Copy subject and object words exactly from the message. If a message states no fact, \
         write nothing for it. Do not call tools.\n\nExample:\n\
         1: I moved to Lisbon and my sister Ana is a nurse.\n\
         1 | user | lives_in | Lisbon\n1 | Ana | job | nurse\n\nMessages:\n",
    );
    for (i, item) in items.iter().enumerate() {
        let text: String = item
            .text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(ITEM_CHARS)
            .collect();
        out.push_str(&format!("{}: {text}\n", i + 1));
    }
    out
}

/// Reads a model's answer to [`model_prompt`]: per item index (0-based), the statements its
/// grounded claims make, and how many claims were dropped as ungrounded. Lines that are not
/// claims are ignored: a small model's chatter around the list costs nothing.
pub fn parse_model_answer(
    answer: &str,
    items: &[ColdItem],
) -> (HashMap<usize, Vec<Statement>>, usize) {
    let mut by_item: HashMap<usize, Vec<Statement>> = HashMap::new();
    let mut ungrounded = 0;
    for line in answer.lines().take(MAX_CLAIMS * 4) {
        let Some((n, subject, predicate, object)) = claim_fields(line) else {
            continue;
        };
        let Some(item) = n
            .checked_sub(1)
            .and_then(|i| items.get(i).map(|it| (i, it)))
        else {
            continue;
        };
        let (index, item) = item;
        let Some(fact) = grounded_fact(item, &subject, &predicate, &object) else {
            ungrounded += 1;
            continue;
        };
        let statements = by_item.entry(index).or_default();
        if statements.iter().map(|s| s.facts.len()).sum::<usize>() >= MAX_CLAIMS {
            continue;
        }
        let sentence = source_sentence(&item.text, &fact.object);
        match statements.iter_mut().find(|s| s.sentence == sentence) {
            Some(st) if !st.facts.contains(&fact) => st.facts.push(fact),
            Some(_) => {}
            None => statements.push(Statement {
                sentence,
                facts: vec![fact],
                events: Vec::new(),
            }),
        }
    }
    (by_item, ungrounded)
}

/// `n | subject | predicate | object`, tolerating list marks, `:` after the number and
/// surrounding quotes.
fn claim_fields(line: &str) -> Option<(usize, String, String, String)> {
    let line = line
        .trim()
        .trim_start_matches(['-', '*', '•'])
        .trim()
        .trim_matches('`');
    let parts: Vec<&str> = line.split('|').map(str::trim).collect();
    let [n, subject, predicate, object] = parts.as_slice() else {
        return None;
    };
    let n: usize = n.trim_end_matches([':', '.', ')']).trim().parse().ok()?;
    let clean = |s: &str| {
        s.trim_matches(['"', '\'', '“', '”', '.', '。'])
            .trim()
            .to_owned()
    };
    Some((n, clean(subject), clean(predicate), clean(object)))
}

/// The fact a claim states, if it is grounded in `item` and well formed.
fn grounded_fact(item: &ColdItem, subject: &str, predicate: &str, object: &str) -> Option<Fact> {
    let words = item.text.to_lowercase();
    let speaker = names_the_speaker(subject);
    let in_words = |s: &str| said_in(&words, &s.to_lowercase());
    if !in_words(object) || (!speaker && !in_words(subject)) {
        return None;
    }
    let predicate = predicate.to_lowercase().replace([' ', '-'], "_");
    validate_predicate(&predicate).ok()?;
    let subject = if speaker {
        USER.to_owned()
    } else {
        validate_name(subject).ok()?
    };
    let object = validate_name(object).ok()?;
    if subject.to_lowercase() == object.to_lowercase() {
        return None;
    }
    Some(Fact {
        subject,
        subject_kind: "person",
        predicate,
        object,
        object_kind: "concept",
        mode: FactMode::Holds,
        // Below the rules' confidence: a model's reading is a proposal until stated again.
        confidence: 0.6,
        valid_from: None,
    })
}

/// Whether `phrase` occurs in `words` (both lower-case) as whole words: "rain" is not in
/// "rainy". Scripts written without spaces (Chinese) match anywhere.
fn said_in(words: &str, phrase: &str) -> bool {
    if phrase.is_empty() {
        return false;
    }
    let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric() || !c.is_ascii());
    words.match_indices(phrase).any(|(at, _)| {
        let before = words[..at].chars().next_back();
        let after = words[at + phrase.len()..].chars().next();
        let ascii_edges = phrase.starts_with(|c: char| c.is_ascii_alphanumeric())
            || phrase.ends_with(|c: char| c.is_ascii_alphanumeric());
        !ascii_edges || (boundary(before) && boundary(after))
    })
}

/// The sentence of `text` that holds `object` (the provenance "why do you believe this"
/// answers with), or the whole text when none does on its own.
fn source_sentence(text: &str, object: &str) -> String {
    let lower_object = object.to_lowercase();
    text.split_inclusive(['.', '!', '?', '。', '！', '？', '\n'])
        .map(str::trim)
        .find(|s| s.to_lowercase().contains(&lower_object))
        .unwrap_or(text.trim())
        .to_owned()
}

impl GraphStore {
    /// Of `candidates` (cold item ids the kernel found cold: idle 72 h, ≤ 2 accesses, least
    /// recently used first), up to `limit` the model has not done and that are not waiting
    /// for a retry at `now_ms`.
    pub fn model_due(
        &self,
        candidates: &[i64],
        now_ms: i64,
        limit: usize,
    ) -> Result<Vec<i64>, GraphError> {
        const OP: &str = "model_due";
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT state = 'done' OR retry_ms > ?2 FROM model_distilled WHERE cold_item = ?1",
            )
            .ctx(OP, &self.path)?;
        let mut due = Vec::new();
        for &id in candidates {
            if due.len() >= limit {
                break;
            }
            let skip: Option<bool> = stmt
                .query_row(params![id, now_ms], |r| r.get(0))
                .optional()
                .ctx(OP, &self.path)?;
            if !skip.unwrap_or(false) {
                due.push(id);
            }
        }
        Ok(due)
    }

    /// Stores what the model's answer says of `item`, and records the attempt, in one
    /// transaction. `statements` come from [`parse_model_answer`]; empty (or an answer that
    /// never came) records an attempt that gave nothing, retried later.
    pub fn record_model(
        &mut self,
        item: &ColdItem,
        statements: &[Statement],
        now_ms: i64,
    ) -> Result<ModelOutcome, GraphError> {
        const OP: &str = "record_model";
        let source = FactSource {
            cold_item: Some(item.id),
            turn_id: item.turn_id.clone(),
            said_ms: item.said_ms,
        };
        let embedder = self.embedder.clone();
        let tx = self.conn.transaction().ctx(OP, &self.path)?;
        let told = facts_tell_in(
            &tx,
            &self.path,
            statements,
            &source,
            now_ms,
            embedder.as_deref(),
        )?;
        // Claims all known already are an answer too: asking again would only repeat them.
        let claims: usize = statements.iter().map(|s| s.facts.len()).sum();
        let done = claims > 0 || told.wrote() || told.forgotten > 0;
        record_attempt(&tx, &self.path, item.id, done, now_ms)?;
        tx.commit().ctx(OP, &self.path)?;
        Ok(ModelOutcome { claims, told, done })
    }

    /// How many items the model has done, and how many wait for a retry.
    pub fn model_counts(&self) -> Result<(u64, u64), GraphError> {
        self.conn
            .query_row(
                "SELECT coalesce(sum(state = 'done'), 0), coalesce(sum(state = 'empty'), 0) \
                 FROM model_distilled",
                [],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?.max(0) as u64,
                        r.get::<_, i64>(1)?.max(0) as u64,
                    ))
                },
            )
            .ctx("model_counts", &self.path)
    }
}

fn record_attempt(
    conn: &Connection,
    path: &std::path::Path,
    cold_item: i64,
    done: bool,
    now_ms: i64,
) -> Result<(), GraphError> {
    const OP: &str = "model_record";
    let attempts: i64 = conn
        .query_row(
            "SELECT attempts FROM model_distilled WHERE cold_item = ?1",
            [cold_item],
            |r| r.get(0),
        )
        .optional()
        .ctx(OP, path)?
        .unwrap_or(0)
        + 1;
    let retry = (!done).then(|| retry_after(attempts, now_ms));
    conn.execute(
        "INSERT INTO model_distilled (cold_item, state, attempts, last_ms, retry_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (cold_item) DO UPDATE SET \
         state = excluded.state, attempts = excluded.attempts, last_ms = excluded.last_ms, \
         retry_ms = excluded.retry_ms",
        params![
            cold_item,
            if done { "done" } else { "empty" },
            attempts,
            now_ms,
            retry
        ],
    )
    .ctx(OP, path)
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: i64, text: &str) -> ColdItem {
        ColdItem {
            id,
            turn_id: format!("t{id}"),
            said_ms: 1_700_000_000_000,
            text: text.into(),
            utc_offset_secs: 0,
        }
    }

    #[test]
    fn grounded_claims_are_kept_and_inventions_dropped() {
        let items = [
            item(10, "I moved to Lisbon last year. My sister Ana is a nurse."),
            item(11, "我喜欢爬山。"),
        ];
        let answer = "Sure! Here are the facts:\n\
                      1 | user | lives_in | Lisbon\n\
                      - 1: | Ana | job | nurse.\n\
                      1 | user | lives_in | Paris\n\
                      1 | Bob | knows | Ana\n\
                      2 | 我 | likes | 爬山\n\
                      3 | user | likes | tea\n\
                      1 | user | Lives In | Lisbon\n\
                      1 | user | lives in! | Lisbon\n\
                      not a claim | at all";
        let (by_item, ungrounded) = parse_model_answer(answer, &items);
        let facts = |i: usize| -> Vec<(String, String, String)> {
            by_item[&i]
                .iter()
                .flat_map(|s| s.facts.iter())
                .map(|f| (f.subject.clone(), f.predicate.clone(), f.object.clone()))
                .collect()
        };
        let t = |s: &str, p: &str, o: &str| (s.to_owned(), p.to_owned(), o.to_owned());
        assert_eq!(
            facts(0),
            [t("user", "lives_in", "Lisbon"), t("Ana", "job", "nurse")]
        );
        assert_eq!(facts(1), [t("user", "likes", "爬山")]);
        // Paris and Bob are not in the words; item 3 does not exist; `lives in!` is no predicate.
        assert_eq!(ungrounded, 3);
        let lisbon = &by_item[&0][0];
        assert_eq!(lisbon.sentence, "I moved to Lisbon last year.");
        assert_eq!(by_item[&0][1].sentence, "My sister Ana is a nurse.");
    }

    #[test]
    fn claims_are_grounded_on_whole_words() {
        assert!(said_in("i moved to lisbon.", "lisbon"));
        assert!(!said_in("what a rainy day", "rain"));
        assert!(!said_in("ana's brother", "an"));
        assert!(said_in("我喜欢爬山。", "爬山"));
        assert!(said_in("我住在lisbon了", "lisbon"));
        assert!(!said_in("anything", ""));
    }

    #[test]
    fn the_prompt_numbers_items_and_cuts_long_ones() {
        let long = "word ".repeat(400);
        let prompt = model_prompt(&[item(1, "I live in Porto."), item(2, &long)]);
        assert!(prompt.contains("\n1: I live in Porto.\n"));
        let second = prompt.lines().find(|l| l.starts_with("2: ")).unwrap();
        assert_eq!(second.chars().count(), ITEM_CHARS + 3);
        assert!(prompt.contains("number | subject | predicate | object"));
    }
}
