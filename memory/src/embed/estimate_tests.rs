//! The token estimate ([`crate::estimate_tokens`]) against real tokenizers: the embedded
//! default model's (byte-level BPE, recorded in `tests/fixtures/token_counts.json` by
//! `bench/scripts/token_counts.py`) and the two SentencePiece vocabularies installed for memory
//! (USE's and e5's, run here). A prompt built to the estimate must fit the window, so the
//! estimate may not fall short of what a class of text really costs; each line also prints how
//! much of the estimate is really spent, the room a budget leaves unused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::{DEFAULT_MAX_TOKENS, E5_MAX_TOKENS, E5Embedder, OnnxEmbedder};
use crate::estimate_tokens;
use crate::test_support::watchdog;

#[derive(Deserialize)]
struct Counts {
    classes: BTreeMap<String, Vec<(String, usize)>>,
}

fn fixture() -> Counts {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/token_counts.json");
    serde_json::from_slice(&std::fs::read(&path).expect("token_counts.json")).expect("its form")
}

/// Real tokens over estimated tokens of a class: the whole class, and its worst text.
struct Spent {
    whole: f64,
    worst: f64,
    worst_text: String,
}

fn spent<'a>(rows: impl Iterator<Item = (&'a str, usize)>) -> Spent {
    let (mut real, mut estimated) = (0, 0);
    let mut out = Spent {
        whole: 0.0,
        worst: 0.0,
        worst_text: String::new(),
    };
    for (text, count) in rows {
        let est = estimate_tokens(text);
        real += count;
        estimated += est;
        let ratio = count as f64 / est as f64;
        if ratio > out.worst {
            out.worst = ratio;
            out.worst_text = text.to_owned();
        }
    }
    out.whole = real as f64 / estimated as f64;
    out
}

/// Checks every class of `counts` (text, real tokens): the class as a whole within the
/// estimate, no text more than a fifth over it (the budget's answer reserve).
fn check(tokenizer: &str, counts: &BTreeMap<String, Vec<(&str, usize)>>) {
    for (class, rows) in counts {
        let s = spent(rows.iter().copied());
        println!(
            "{tokenizer:>8} {class:>8}: {:>3} texts, real/estimate {:.3} whole, {:.3} worst",
            rows.len(),
            s.whole,
            s.worst
        );
        assert!(s.whole <= 1.0, "{tokenizer} {class}: {:.3}", s.whole);
        assert!(
            s.worst <= 1.2,
            "{tokenizer} {class}: {:.3} on {:?}",
            s.worst,
            s.worst_text
        );
    }
}

#[test]
fn the_estimate_covers_a_byte_level_model_on_every_class_of_text() {
    let counts = fixture();
    let rows = counts
        .classes
        .iter()
        .map(|(c, rows)| {
            (
                c.clone(),
                rows.iter().map(|(t, n)| (t.as_str(), *n)).collect(),
            )
        })
        .collect();
    check("SmolLM2", &rows);
}

#[test]
fn the_estimate_covers_the_sentencepiece_vocabularies() {
    watchdog(120, || {
        let counts = fixture();
        let use_m3 = OnnxEmbedder::locate_and_load(None, 1).expect("run `make setup`");
        let e5 = E5Embedder::locate_and_load(None, 1).expect("run `make setup`");
        // Both add their markers (and e5 its "passage: "): counted from an empty text's ids.
        let use_base = use_m3.tokenize(&[""]).expect("tokenize").ids.len();
        let e5_base = e5.token_ids("", false).len();
        let mut use_rows = BTreeMap::new();
        let mut e5_rows = BTreeMap::new();
        for (class, rows) in &counts.classes {
            let texts: Vec<&str> = rows.iter().map(|(t, _)| t.as_str()).collect();
            let batch = use_m3.tokenize(&texts).expect("tokenize");
            let mut u = Vec::new();
            let mut e = Vec::new();
            for (i, text) in texts.iter().enumerate() {
                // A text cut at the model's limit tells nothing about its whole cost.
                let n = (batch.row_splits[i + 1] - batch.row_splits[i]) as usize;
                if n < DEFAULT_MAX_TOKENS {
                    u.push((*text, n - use_base));
                }
                let n = e5.token_ids(text, false).len();
                if n < E5_MAX_TOKENS {
                    e.push((*text, n - e5_base));
                }
            }
            use_rows.insert(class.clone(), u);
            e5_rows.insert(class.clone(), e);
        }
        check("USE", &use_rows);
        check("e5", &e5_rows);
    });
}
