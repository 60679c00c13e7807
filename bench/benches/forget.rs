//! What a forget costs the store's owner thread as the memory grows: taking a fact's sentence
//! out of its turn (`ColdContext::redact`: the turn's cold entries found by the `cold_by_turn`
//! index, rewritten with their bytes zeroed, the keyword index's old terms deleted) and
//! forgetting a remembered entry with its turn (`ColdContext::forget_entry`), and finding the
//! turns whose reply was shown a fact (`StoreReader::turns_shown`). Printed beside a
//! keyword recall of the same store in the same run (what every turn's memory pass does).
//! Keyword-only (no embedding model): with one, a redaction also embeds the rewritten entries
//! again, ~1 ms each with the default model.
//!
//! `FORGET_BENCH_SIZES` lists the store sizes in turns (default `10000,100000`); each turn is
//! kept twice, as the daemon keeps it (its input, then with its reply).

use std::time::Instant;

use hearth_bench::{Samples, report};
use hearth_memory::{ColdContext, ContextEvent, Redaction, Store};

const SAMPLES: usize = 20;
const BATCH: usize = 2_000;

fn turn(i: usize) -> (String, String) {
    (
        format!("req-{i}"),
        format!(
            "I keep the spare key number {i} in drawer {}. The plumber comes on day {}.",
            i % 97,
            i % 31
        ),
    )
}

fn filled(dir: &std::path::Path, turns: usize) -> ColdContext {
    let store = Store::open(dir.join("memory.db")).expect("store");
    let mut cold = ColdContext::new(store, None);
    let mut i = 0;
    while i < turns {
        let events: Vec<ContextEvent> = (i..(i + BATCH).min(turns))
            .flat_map(|n| {
                let (id, text) = turn(n);
                let mut alone = ContextEvent::new(n as i64 * 1_000, "cli", &text);
                alone.id.clone_from(&id);
                let mut answered = alone.clone().with_response("Noted.");
                answered.id = id;
                // Each reply was shown one of 50 facts, as the indexer's block shows a few.
                answered.shown = vec![format!("r{}", n % 50)];
                [alone, answered]
            })
            .collect();
        cold.archive_events(events, "prune", 0).expect("archive");
        i += BATCH;
    }
    cold
}

fn main() {
    let sizes: Vec<usize> = std::env::var("FORGET_BENCH_SIZES")
        .unwrap_or_else(|_| "10000,100000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    for turns in sizes {
        let dir = hearth_testkit::fresh_dir("forget-bench");
        let built = Instant::now();
        let mut cold = filled(&dir, turns);
        println!(
            "== store of {turns} turns ({} entries) built in {:.1} s",
            2 * turns,
            built.elapsed().as_secs_f64()
        );
        let (mut redact, mut forget, mut recall) = (Vec::new(), Vec::new(), Vec::new());
        let mut shown = Vec::new();
        for k in 0..SAMPLES {
            // Spread over the store; redaction and forget never touch the same turn.
            let a = (k * 7_919) % turns;
            let b = (k * 7_919 + turns / 2) % turns;
            let (id, text) = turn(a);
            let sentence = text.split(". ").next().unwrap_or_default().to_owned();
            let start = Instant::now();
            let done = cold
                .redact(&[Redaction {
                    turn_id: id,
                    cold_item: None,
                    words: sentence,
                    scope: hearth_memory::RedactionScope::Verbatim,
                }])
                .expect("redact");
            redact.push(start.elapsed());
            assert_eq!(done.cold_entries.len(), 2, "both entries of the turn");

            let entry = (2 * b + 1) as i64;
            let start = Instant::now();
            let gone = cold.forget_entry(entry).expect("forget");
            forget.push(start.elapsed());
            assert_eq!(gone.cold_entries.len(), 2, "the entry and its twin");

            let start = Instant::now();
            let turns = cold
                .store()
                .turns_shown(&[format!("r{}", k % 50)])
                .expect("turns shown");
            shown.push(start.elapsed());
            assert!(!turns.is_empty());

            let start = Instant::now();
            let hits = cold
                .peek(&format!("spare key drawer {}", k % 97), 10, i64::MAX)
                .expect("recall");
            recall.push(start.elapsed());
            std::hint::black_box(hits);
        }
        let recall = Samples::new(recall);
        report(
            &format!("redact one sentence from its turn, {turns} turns"),
            &Samples::new(redact),
            "keyword recall, same store",
            &recall,
            None,
        );
        report(
            &format!("find the turns a fact was shown in (1 in 50 replies), {turns} turns"),
            &Samples::new(shown),
            "keyword recall, same store",
            &recall,
            None,
        );
        report(
            &format!("forget a remembered entry with its turn, {turns} turns"),
            &Samples::new(forget),
            "keyword recall, same store",
            &recall,
            None,
        );
        drop(cold);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
