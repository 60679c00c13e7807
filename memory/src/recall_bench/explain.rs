//! Reading a miss: for chosen questions of a set, the fused top ten and the question's evidence,
//! each with its place and score in every list and the priors' factor on it, from the stores a
//! previous run kept (`hearth bench recall FILE --store-dir DIR --explain ID,…`).

use std::collections::HashMap;
use std::path::Path;

use super::kept_store::holds_corpus;
use super::{CorpusItem, MemoryModels, RecallBenchError, RecallSet, now_ms};
use crate::Store;
use crate::recall::{ColdContext, Explained, RecallConfig, parse_iso8601};

/// Entries shown from the top of the fused ranking.
const TOP: usize = 10;

/// Writes, through `out`, how `config` ranks each question of `set` named in `ids`: its top
/// ten and its evidence. The corpora must be kept in `store_dir` by an earlier run with the
/// same models (a store is read, never built here).
pub fn explain_questions(
    set: &RecallSet,
    ids: &[String],
    models: &MemoryModels,
    config: &RecallConfig,
    store_dir: &Path,
    out: &mut dyn FnMut(&str),
) -> Result<(), RecallBenchError> {
    for id in ids {
        let Some(q) = set.questions.iter().find(|q| &q.id == id) else {
            out(&format!("question {id}: not in the set"));
            continue;
        };
        let Some(corpus) = set.corpora.get(&q.corpus) else {
            out(&format!(
                "question {id}: its corpus {} is not in the set",
                q.corpus
            ));
            continue;
        };
        let path = store_dir.join(format!("{}.db", q.corpus));
        let not_kept = || {
            format!(
                "question {id}: {} does not hold corpus {} with these models (run the bench with --store-dir first)",
                path.display(),
                q.corpus
            )
        };
        // Opening creates a store: a missing one is reported, not made.
        if !path.is_file() {
            out(&not_kept());
            continue;
        }
        let store = Store::open(&path)?;
        if !holds_corpus(&store, corpus.len(), models)? {
            out(&not_kept());
            continue;
        }
        let items: Vec<(i64, String)> = store
            .cold_entries()
            .map(|e| e.map(|e| (e.id, e.event.id)))
            .collect::<Result<_, _>>()?;
        let cold_of: HashMap<&str, i64> = items.iter().map(|(c, i)| (i.as_str(), *c)).collect();
        let item_of: HashMap<i64, &str> = items.iter().map(|(c, i)| (*c, i.as_str())).collect();
        let mut cold = ColdContext::new(store, models.dense.clone()).with_config(config.clone());
        if let Some(companion) = &models.companion {
            cold = cold.with_companion(companion.clone());
        }
        let asked = q
            .time
            .as_deref()
            .and_then(parse_iso8601)
            .unwrap_or_else(now_ms);
        let by_item: HashMap<&str, &CorpusItem> =
            corpus.iter().map(|i| (i.id.as_str(), i)).collect();
        let top: Vec<i64> = cold
            .peek(&q.text, TOP, asked)?
            .iter()
            .map(|r| r.id)
            .collect();
        let evidence: Vec<i64> = q
            .evidence
            .iter()
            .filter_map(|e| cold_of.get(e.as_str()).copied())
            .collect();
        let mut wanted = top.clone();
        wanted.extend(evidence.iter().filter(|e| !top.contains(e)));
        let explained = cold.explain(&q.text, asked, &wanted)?;
        out(&format!("question {id} ({}): {}", q.category, q.text));
        out("  fused        dense        keyword      companion    prior  item");
        for e in &explained {
            let item = item_of.get(&e.id).and_then(|i| by_item.get(i));
            let mark = if evidence.contains(&e.id) { "*" } else { " " };
            let text = item.map_or_else(String::new, |i| {
                format!("{} {}: {}", i.id, i.speaker, first_chars(&i.text, 90))
            });
            let prior = e.prior.map_or("-".to_owned(), |p| format!("{p:.2}"));
            out(&format!("{mark} {} {prior:>5} {text}", row(e).join(" ")));
        }
        if evidence.is_empty() {
            out("  (no evidence item found in the store)");
        }
    }
    Ok(())
}

/// The first `n` characters of `text` on one line.
fn first_chars(text: &str, n: usize) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(n)
        .collect()
}

/// Where one entry stands, one column per list.
fn row(e: &Explained) -> [String; 4] {
    [
        place(e.fused),
        place(e.dense),
        place(e.keyword),
        place(e.companion),
    ]
}

/// `rank:score` in a fixed width, or `-` when the list did not hold the entry.
fn place(at: Option<(usize, f64)>) -> String {
    match at {
        Some((rank, score)) => format!("{:<12}", format!("{rank}:{score:.3}")),
        None => format!("{:<12}", "-"),
    }
}
