//! Embedding tests. The dense ones run the real installed model: without it they fail with the
//! "run `make setup`" message instead of passing vacuously.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use proptest::prelude::*;

use super::tokens::{cjk_bigrams, is_stop_word, tokenize};
use super::*;
use crate::test_support::watchdog;

/// The installed model, loaded once for all tests of this binary.
fn model() -> &'static OnnxEmbedder {
    static MODEL: OnceLock<OnnxEmbedder> = OnceLock::new();
    MODEL.get_or_init(|| match OnnxEmbedder::locate_and_load(None, 1) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    })
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn norm(a: &[f32]) -> f32 {
    dot(a, a).sqrt()
}

const TRANSLATIONS: &[(&str, &str)] = &[
    ("The weather is nice today.", "今天天气很好。"),
    (
        "I like to drink coffee in the morning.",
        "我喜欢早上喝咖啡。",
    ),
    (
        "Where is the nearest train station?",
        "最近的火车站在哪里？",
    ),
    (
        "Please remind me to call my mother tonight.",
        "请提醒我今晚给妈妈打电话。",
    ),
    (
        "Machine learning models need a lot of data.",
        "机器学习模型需要大量的数据。",
    ),
];

const UNRELATED: &[(&str, &str)] = &[
    ("The weather is nice today.", "机器学习模型需要大量的数据。"),
    (
        "I like to drink coffee in the morning.",
        "The stock exchange closed lower on Friday.",
    ),
    ("最近的火车站在哪里？", "请提醒我今晚给妈妈打电话。"),
    ("Where is the nearest train station?", "我喜欢早上喝咖啡。"),
];

#[test]
fn translation_pairs_score_high_and_unrelated_pairs_low() {
    watchdog(120, || {
        let m = model();
        for (en, zh) in TRANSLATIONS {
            let c = dot(
                &m.embed(en).expect("embed en"),
                &m.embed(zh).expect("embed zh"),
            );
            assert!(c >= 0.6, "translation pair {en:?} / {zh:?} scored {c}");
        }
        for (a, b) in UNRELATED {
            let c = dot(&m.embed(a).expect("embed a"), &m.embed(b).expect("embed b"));
            assert!(c <= 0.3, "unrelated pair {a:?} / {b:?} scored {c}");
        }
    });
}

#[test]
fn vectors_are_unit_norm_with_the_model_dimension() {
    watchdog(120, || {
        let m = model();
        assert_eq!(m.dim(), 512);
        assert_eq!(m.fingerprint().dim(), 512);
        let texts: Vec<&str> = TRANSLATIONS.iter().flat_map(|(a, b)| [*a, *b]).collect();
        let rows = m.embed_batch(&texts).expect("embed batch");
        assert_eq!(rows.len(), texts.len());
        for (row, text) in rows.iter().zip(&texts) {
            assert_eq!(row.len(), 512);
            assert!(
                (norm(row) - 1.0).abs() < 1e-4,
                "{text:?} has norm {}",
                norm(row)
            );
        }
    });
}

#[test]
fn batch_and_single_embeddings_agree() {
    watchdog(120, || {
        let m = model();
        let texts: Vec<&str> = TRANSLATIONS
            .iter()
            .chain(UNRELATED)
            .flat_map(|(a, b)| [*a, *b])
            .collect();
        let batch = m.embed_batch(&texts).expect("embed batch");
        for (text, row) in texts.iter().zip(&batch) {
            let single = m.embed(text).expect("embed single");
            let c = dot(&single, row);
            assert!(c >= 0.99, "{text:?}: batch vs single cosine {c}");
        }
        // Alone, a text is bit-for-bit reproducible.
        assert_eq!(m.embed(texts[0]).unwrap(), m.embed(texts[0]).unwrap());
    });
}

#[test]
fn empty_input_and_empty_text_are_handled() {
    watchdog(120, || {
        let m = model();
        assert!(m.embed_batch(&[]).expect("empty batch").is_empty());
        let v = m.embed("").expect("empty text");
        assert_eq!(v.len(), 512);
        assert!((norm(&v) - 1.0).abs() < 1e-4);
        let tokens = m.tokenize(&["", "   "]).expect("tokenize");
        // An empty text is `<s> </s>`: the graph never sees an empty row.
        assert_eq!(tokens.row_splits, vec![0, 2, 4]);
    });
}

#[test]
fn long_text_is_truncated_not_refused() {
    watchdog(120, || {
        let m = model();
        // 10,800 characters: past the tokenizer's input cut as well as the token limit.
        let long = "我们明天去北京旅游吧，顺便看看长城。".repeat(600);
        let longer = format!("{long} And then something entirely different about stock markets.");
        let tokens = m.tokenize(&[&long]).expect("tokenize long");
        assert_eq!(tokens.ids.len(), DEFAULT_MAX_TOKENS);
        assert_eq!(tokens.row_splits, vec![0, DEFAULT_MAX_TOKENS as i64]);
        // Only the first DEFAULT_MAX_TOKENS tokens count: text past them changes nothing.
        let a = m.embed(&long).expect("embed long");
        let b = m.embed(&longer).expect("embed longer");
        assert_eq!(a, b);
        assert!((norm(&a) - 1.0).abs() < 1e-4);
    });
}

#[test]
fn concurrent_callers_get_the_same_vectors_as_serial_ones() {
    watchdog(120, || {
        let m = model();
        let texts: Vec<&'static str> = TRANSLATIONS.iter().map(|(a, _)| *a).collect();
        let serial: Vec<Vec<f32>> = texts.iter().map(|t| m.embed(t).unwrap()).collect();
        let serial = Arc::new(serial);
        std::thread::scope(|s| {
            for _ in 0..2 {
                let serial = Arc::clone(&serial);
                let texts = texts.clone();
                s.spawn(move || {
                    for _ in 0..3 {
                        for (t, want) in texts.iter().zip(serial.iter()) {
                            assert_eq!(&m.embed(t).unwrap(), want);
                        }
                    }
                });
            }
        });
    });
}

#[test]
fn fingerprint_is_stable_across_loads_and_names_the_model_file() {
    watchdog(120, || {
        let assets = EmbedAssets::locate(None).unwrap_or_else(|e| panic!("{e}"));
        let first = model().fingerprint().clone();
        let second = OnnxEmbedder::load(&assets, 1).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&first, second.fingerprint());
        assert!(first.compatible(second.fingerprint()));
        assert_eq!(first.sha(), &assets.model_sha256[..FINGERPRINT_SHA_LEN]);
        assert_eq!(
            first.to_string(),
            format!("use-m3:{}:512:mean", &assets.model_sha256[..12])
        );
        // Both loads compute the same vectors.
        let t = "记忆系统负责保存上下文";
        assert_eq!(model().embed(t).unwrap(), second.embed(t).unwrap());
    });
}

#[test]
fn fingerprint_differs_for_another_model_dim_or_pooling() {
    let sha = "a555d41559da66ea33f49e576674259ff7dfeec4d30c901fd3defe9e1d71c1b2";
    let base = Fingerprint::new("use-m3", sha, 512, Pooling::Mean).unwrap();
    assert_eq!(base.to_string(), "use-m3:a555d41559da:512:mean");
    let others = [
        Fingerprint::new("use-m3", "b555d41559da66ea", 512, Pooling::Mean).unwrap(),
        Fingerprint::new("use-m3", sha, 384, Pooling::Mean).unwrap(),
        Fingerprint::new("use-m3", sha, 512, Pooling::Cls).unwrap(),
        Fingerprint::new("minilm", sha, 512, Pooling::Mean).unwrap(),
    ];
    for other in &others {
        assert!(!base.compatible(other), "{base} vs {other}");
        assert_ne!(base.to_string(), other.to_string());
    }
    // Only the 12-digit prefix matters, in any case.
    let upper = Fingerprint::new("use-m3", &sha.to_ascii_uppercase(), 512, Pooling::Mean).unwrap();
    assert!(base.compatible(&upper));

    // Display, FromStr and serde agree.
    let parsed: Fingerprint = base.to_string().parse().unwrap();
    assert_eq!(parsed, base);
    let json = serde_json::to_string(&base).unwrap();
    assert_eq!(json, "\"use-m3:a555d41559da:512:mean\"");
    assert_eq!(serde_json::from_str::<Fingerprint>(&json).unwrap(), base);

    for bad in [
        "use-m3:a555d41559da:512",
        "use-m3:a555d4:512:mean",
        "use-m3:a555d41559dz:512:mean",
        "use-m3:a555d41559da:0:mean",
        "use-m3:a555d41559da:x:mean",
        "use-m3:a555d41559da:512:max",
        ":a555d41559da:512:mean",
        "a:b:a555d41559da:512:mean",
    ] {
        assert!(bad.parse::<Fingerprint>().is_err(), "{bad} parsed");
    }
    assert!(serde_json::from_str::<Fingerprint>("\"nope\"").is_err());
    assert!(Fingerprint::new("use-m3", "a555", 512, Pooling::Mean).is_err());
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hearth-embed-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

#[test]
fn missing_assets_say_run_make_setup() {
    let cache = scratch_dir("missing");
    let err = EmbedAssets::locate(Some(cache.clone())).unwrap_err();
    assert!(err.is_not_installed());
    assert!(
        err.to_string()
            .starts_with("embedding model not installed: run `make setup`"),
        "{err}"
    );

    // READY without the files (a setup interrupted after a manual cleanup) is not installed either.
    let dir = cache.join("embedder");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("READY"), "x").unwrap();
    std::fs::write(dir.join(RUNTIME_LIB_FILE), "x").unwrap();
    let err = EmbedAssets::locate(Some(cache.clone())).unwrap_err();
    assert!(err.is_not_installed(), "{err}");
    assert!(err.to_string().contains(MODEL_FILE), "{err}");

    // All files but no checksum for the model: present but unusable, not "not installed".
    std::fs::write(dir.join(MODEL_FILE), "x").unwrap();
    std::fs::write(dir.join(TOKENIZER_FILE), "x").unwrap();
    std::fs::write(dir.join("SHA256SUMS"), "").unwrap();
    let err = EmbedAssets::locate(Some(cache.clone())).unwrap_err();
    assert!(matches!(err, EmbedError::Asset { .. }), "{err}");
    let _ = std::fs::remove_dir_all(&cache);
}

/// Captures warn-level events so the fallback's announcement can be checked.
#[derive(Default, Clone)]
struct WarnCapture(Arc<Mutex<Vec<String>>>);

impl tracing::Subscriber for WarnCapture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        struct Text(String);
        impl tracing::field::Visit for Text {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push_str(&format!("{}={:?} ", field.name(), value));
            }
        }
        if *event.metadata().level() == tracing::Level::WARN {
            let mut text = Text(String::new());
            event.record(&mut text);
            self.0.lock().unwrap().push(text.0);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn fallback_is_sparse_and_announced() {
    let cache = scratch_dir("fallback");
    let capture = WarnCapture::default();
    let chosen = tracing::subscriber::with_default(capture.clone(), || {
        TextEmbedder::load_or_fallback(Some(cache.clone()), 1)
    });
    assert!(matches!(chosen, TextEmbedder::Sparse(_)));
    assert!(chosen.dense().is_none());
    assert!(chosen.degraded().is_some());
    let warnings = capture.0.lock().unwrap().clone();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("recall quality is reduced"),
        "{warnings:?}"
    );
    assert!(warnings[0].contains("make setup"), "{warnings:?}");
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn tokenize_keeps_content_words_of_chinese_and_english() {
    let zh = tokenize("我喜欢早上喝咖啡。");
    assert!(zh.contains(&"喜欢".to_owned()), "{zh:?}");
    assert!(zh.contains(&"早上".to_owned()), "{zh:?}");
    assert!(!zh.contains(&"我".to_owned()), "stop word kept: {zh:?}");
    // Jieba may keep 喝咖啡 whole; the bigrams still carry 咖啡.
    assert!(cjk_bigrams("我喜欢早上喝咖啡。").contains(&"咖啡".to_owned()));
    assert!(!zh.iter().any(|t| t == "。"), "punctuation kept: {zh:?}");

    assert_eq!(
        tokenize("The Quick brown fox,  jumps over the lazy DOG!"),
        ["quick", "brown", "fox", "jumps", "over", "lazy", "dog"]
    );
    // Full-width letters and digits fold to ASCII.
    assert_eq!(tokenize("ＡＢＣ １２３"), ["abc", "123"]);
    assert!(tokenize(" \t\n，。！？…——").is_empty());
    assert!(tokenize("").is_empty());
    // Negations are meaning, not noise.
    assert!(!is_stop_word("不") && !is_stop_word("not"));
    // Repeats are kept: they are term frequencies.
    assert_eq!(tokenize("咖啡 咖啡 coffee"), ["咖啡", "咖啡", "coffee"]);
}

#[test]
fn cjk_bigrams_cover_each_run_of_cjk_characters() {
    assert_eq!(
        cjk_bigrams("今天天气 ok 好的。猫"),
        ["今天", "天天", "天气", "好的"]
    );
    assert!(cjk_bigrams("plain english text").is_empty());
    assert!(cjk_bigrams("猫").is_empty());
    assert_eq!(cjk_bigrams("カタカナ"), ["カタ", "タカ", "カナ"]);
}

#[test]
fn sparse_vectors_use_tf_over_max_tf() {
    let v = SparseEmbedder.vectorize("coffee coffee tea");
    let mut weights: Vec<f32> = v.entries().iter().map(|&(_, w)| w).collect();
    weights.sort_by(f32::total_cmp);
    assert_eq!(weights, [0.5, 1.0]);
    assert!(SparseEmbedder.vectorize("，。 the of").is_empty());
}

#[test]
fn sparse_cosine_follows_shared_words() {
    let e = SparseEmbedder;
    let a = e.vectorize("我喜欢早上喝咖啡");
    let b = e.vectorize("我喜欢喝咖啡");
    let c = e.vectorize("The stock exchange closed lower");
    assert!(a.cosine(&b) > 0.5, "{}", a.cosine(&b));
    assert_eq!(a.cosine(&c), 0.0);
    assert_eq!(a.cosine(&SparseVector::default()), 0.0);
    // Word order within a text does not matter to a bag of words.
    let d = e.vectorize("brown fox quick");
    let f = e.vectorize("quick brown fox");
    assert!((d.cosine(&f) - 1.0).abs() < 1e-6);
}

#[test]
fn l2_normalize_scales_to_unit_and_leaves_zero_alone() {
    let mut v = vec![3.0, 4.0];
    l2_normalize(&mut v);
    assert_eq!(v, [0.6, 0.8]);
    let mut z = vec![0.0; 3];
    l2_normalize(&mut z);
    assert_eq!(z, [0.0; 3]);
}

fn mixed_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "今天", "天气", "很好", "咖啡", "我们", "北京", "旅游", "记忆", "系统", "的", "，", "。",
        "coffee", "Weather", "train", "station", "the", "of", " ", "  ", "!", "42", "ＡＢ",
    ]);
    prop::collection::vec(pieces, 0..12).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn sparse_cosine_is_bounded_symmetric_and_one_with_itself(a in mixed_text(), b in mixed_text()) {
        let e = SparseEmbedder;
        let (va, vb) = (e.vectorize(&a), e.vectorize(&b));
        let ab = va.cosine(&vb);
        let ba = vb.cosine(&va);
        prop_assert!((0.0..=1.0).contains(&ab), "cos {ab}");
        prop_assert!((ab - ba).abs() <= 1e-6, "asymmetric {ab} vs {ba}");
        if !va.is_empty() {
            prop_assert!((va.cosine(&va) - 1.0).abs() <= 1e-5, "self cosine {}", va.cosine(&va));
        }
        // Features are sorted and unique, weights in (0, 1] with a 1 present (tf / max tf).
        let f = va.entries();
        prop_assert!(f.windows(2).all(|w| w[0].0 < w[1].0));
        prop_assert!(f.iter().all(|&(_, w)| w > 0.0 && w <= 1.0));
        prop_assert!(f.is_empty() || f.iter().any(|&(_, w)| w == 1.0));
    }
}

/// Texts of every kind the tokenizer meets: Chinese, English, mixed, digits, punctuation,
/// emoji, odd whitespace, full-width forms (the normaliser's NFKC map), and text long enough to
/// be truncated. Deterministic: a small linear congruential generator picks and glues pieces.
fn tokenizer_corpus(n: usize) -> Vec<String> {
    const PIECES: &[&str] = &[
        "The weather is nice today.",
        "今天天气很好。",
        "my sister Emma is allergic to peanuts",
        "我的车停在公司地下车库B2层的37号车位",
        "ＦＵＬＬ－ＷＩＤＴＨ ｔｅｘｔ １２３",
        "emoji 🙂🎹 and 猫咪",
        "  double  spaces\tand\ttabs\nand lines  ",
        "naïve café façade Ångström",
        "Привет, как дела?",
        "こんにちは世界",
        "¿Dónde está la estación?",
        "x",
        "",
        "GPU-accelerated über-fast LLMs (v2.1) — 100% #1!",
        "\u{200b}zero\u{200b}width\u{feff}",
        "ﬁnance ligature ½ ² ™",
        "🇨🇳🇺🇸 flags and 👨‍👩‍👧 family",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    (0..n)
        .map(|i| {
            // Every 50th text is long enough to be cut at the token limit.
            let parts = if i % 50 == 0 { 120 } else { 1 + next() % 5 };
            let mut text = String::new();
            for _ in 0..parts {
                text.push_str(PIECES[next() % PIECES.len()]);
                if next() % 3 == 0 {
                    text.push(' ');
                }
            }
            text
        })
        .collect()
}

#[test]
fn compact_tokenizer_gives_the_same_ids_as_the_library_one() {
    watchdog(120, || {
        let assets = EmbedAssets::locate(None).unwrap_or_else(|e| panic!("{e}"));
        let compact = load_sp_tokenizer(&assets.tokenizer, DEFAULT_MAX_TOKENS).expect("compact");
        let mut reference =
            tokenizers::Tokenizer::from_file(&assets.tokenizer).expect("reference tokenizer");
        reference
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: DEFAULT_MAX_TOKENS,
                ..tokenizers::TruncationParams::default()
            }))
            .expect("truncation");
        reference.with_padding(None);
        let mut truncated = 0;
        for text in tokenizer_corpus(5_000) {
            let want = reference
                .encode_fast(text.as_str(), true)
                .expect("reference");
            let got = compact.encode_fast(text.as_str(), true).expect("compact");
            assert_eq!(got.get_ids(), want.get_ids(), "{text:?}");
            truncated += usize::from(want.get_ids().len() == DEFAULT_MAX_TOKENS);
        }
        assert!(
            truncated >= 50,
            "the corpus must exercise truncation: {truncated}"
        );
    });
}

fn token_batch(lengths: &[usize]) -> TokenBatch {
    let mut batch = TokenBatch {
        ids: Vec::new(),
        row_splits: vec![0],
    };
    for (row, &len) in lengths.iter().enumerate() {
        batch.ids.extend((0..len).map(|i| (row * 1000 + i) as i32));
        batch.row_splits.push(batch.ids.len() as i64);
    }
    batch
}

#[test]
fn token_batch_splits_into_runs_of_whole_sentences() {
    let parts = token_batch(&[3, 5, 2, 10, 1]).split(8);
    let rows: Vec<Vec<i64>> = parts.iter().map(|p| p.row_splits.clone()).collect();
    assert_eq!(rows, [vec![0, 3, 8], vec![0, 2], vec![0, 10], vec![0, 1]]);
    assert_eq!(parts[1].ids, [2000, 2001]);
    assert_eq!(parts[2].ids[0], 3000, "a long sentence is a run of its own");
    assert!(token_batch(&[]).split(8).is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn token_batch_split_keeps_every_sentence_in_order(
        lengths in prop::collection::vec(1usize..40, 0..30),
        max in 1usize..100,
    ) {
        let batch = token_batch(&lengths);
        let parts = batch.split(max);
        let ids: Vec<i32> = parts.iter().flat_map(|p| p.ids.clone()).collect();
        prop_assert_eq!(ids, batch.ids.clone());
        let rows: usize = parts.iter().map(TokenBatch::len).sum();
        prop_assert_eq!(rows, lengths.len());
        for part in &parts {
            prop_assert_eq!(part.row_splits[0], 0);
            prop_assert_eq!(*part.row_splits.last().unwrap() as usize, part.ids.len());
            prop_assert!(part.ids.len() <= max || part.len() == 1);
        }
    }
}
