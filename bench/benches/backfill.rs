//! What looking for missing vectors costs the store's owner thread as the memory grows. The
//! daemon looks at start and after every pass that archived entries (`ColdContext::backfill`);
//! a look that finds nothing moves the space's cursor to the newest entry, so the next reads
//! only what was archived since. Measured here: the first look of a fresh cold context (every
//! entry read), the looks after it, and a keyword recall of the same store (what every turn's
//! memory pass does) as the baseline. Every entry already has its vector, as in a store whose
//! back-fill is done; the model is a stand-in that never runs, so only the store's reads count.
//!
//! `BACKFILL_BENCH_SIZES` lists the store sizes in entries (default `10000,100000`).

use std::sync::Arc;
use std::time::Instant;

use hearth_bench::{Samples, report};
use hearth_memory::{ColdContext, ContextEvent, EmbedError, Embedder, Fingerprint, Pooling, Store};

const SAMPLES: usize = 20;
const BATCH: usize = 2_000;
const DIM: usize = 512;

/// Gives every text the same unit vector: the bench measures the store, not a model.
struct Fixed(Fingerprint);

impl Embedder for Fixed {
    fn fingerprint(&self) -> &Fingerprint {
        &self.0
    }

    fn dim(&self) -> usize {
        DIM
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut unit = vec![0.0; DIM];
        unit[0] = 1.0;
        Ok(vec![unit; texts.len()])
    }
}

fn model() -> Arc<dyn Embedder> {
    let fp = Fingerprint::new("fixed", "0123456789ab", DIM, Pooling::Mean).expect("fingerprint");
    Arc::new(Fixed(fp))
}

/// A store of `entries` archived turns, each with a reply of a few hundred bytes, all embedded.
fn filled(dir: &std::path::Path, entries: usize) {
    let store = Store::open(dir.join("memory.db")).expect("store");
    let mut cold = ColdContext::new(store, Some(model()));
    let reply = "Noted, I will keep that in mind for next time. ".repeat(6);
    let mut i = 0;
    while i < entries {
        let events: Vec<ContextEvent> = (i..(i + BATCH).min(entries))
            .map(|n| {
                let text = format!(
                    "I keep the spare key number {n} in drawer {}. The plumber comes on day {}.",
                    n % 97,
                    n % 31
                );
                ContextEvent::new(n as i64 * 1_000, "cli", text).with_response(&reply)
            })
            .collect();
        cold.archive_events(events, "prune", 0).expect("archive");
        i += BATCH;
    }
}

fn main() {
    let sizes: Vec<usize> = std::env::var("BACKFILL_BENCH_SIZES")
        .unwrap_or_else(|_| "10000,100000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    for entries in sizes {
        let dir = hearth_testkit::fresh_dir("backfill-bench");
        let built = Instant::now();
        filled(&dir, entries);
        println!(
            "== store of {entries} entries built in {:.1} s",
            built.elapsed().as_secs_f64()
        );
        let (mut first, mut later, mut recall) = (Vec::new(), Vec::new(), Vec::new());
        for k in 0..SAMPLES {
            let store = Store::open(dir.join("memory.db")).expect("store");
            let mut cold = ColdContext::new(store, Some(model()));
            let start = Instant::now();
            assert_eq!(cold.backfill(4).expect("look"), 0, "nothing is missing");
            first.push(start.elapsed());
            let start = Instant::now();
            assert_eq!(cold.backfill(4).expect("look"), 0);
            later.push(start.elapsed());
            let query = format!("spare key drawer {}", k % 97);
            // The first recall of a fresh cold context loads its vector indexes: the turn's
            // recall is the one after.
            cold.peek(&query, 10, i64::MAX).expect("recall");
            let start = Instant::now();
            let hits = cold.peek(&query, 10, i64::MAX).expect("recall");
            recall.push(start.elapsed());
            std::hint::black_box(hits);
        }
        let recall = Samples::new(recall);
        report(
            &format!("first look for missing vectors, {entries} entries"),
            &Samples::new(first),
            "keyword and dense recall, same store",
            &recall,
            None,
        );
        report(
            &format!("a later look (the cursor at the newest entry), {entries} entries"),
            &Samples::new(later),
            "keyword and dense recall, same store",
            &recall,
            None,
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
