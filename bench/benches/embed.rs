//! The default text embedder on one core: sentences per second batched (32 a run) and one at a
//! time, against a bare `Session::run` of the same graph on the same pre-tokenised batch, timed
//! in the same run. Budgets (DESIGN §5): ≥ 1,000 short sentences/s batched, and a batch through
//! `OnnxEmbedder::embed_batch` (tokenise, run, normalise) ≤ 1.2× the bare run.
//!
//! The companion model (multilingual-e5-small, recall's second dense ranking) is timed against
//! the default one on the same sentences in the same run: it costs more per sentence (a
//! 12-layer transformer against USE's lighter encoder), which is the price of its recall gain.
//!
//! Needs the installed model (`make setup`). Embedder and baseline alternate batch by batch so
//! drift on a shared machine hits both alike; criterion then times the headline paths.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use hearth_bench::{Samples, pin_to_core, report, us};
use hearth_memory::{
    E5Embedder, EmbedAssets, Embedder, OnnxEmbedder, TokenBatch, onnx_environment,
};
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::TensorRef;

/// The core the measuring thread runs on.
const CORE: usize = 1;
const BATCH: usize = 32;
/// Embedder time over bare `Session::run` time allowed for a batch.
const OVERHEAD_BUDGET: f64 = 1.2;
const MIN_SENTENCES_PER_S: f64 = 1_000.0;

/// Short zh/en/mixed sentences, the kind of text a turn or a memory holds.
fn sentences(n: usize) -> Vec<String> {
    let subjects = [
        "我",
        "我们",
        "The user",
        "妈妈",
        "The assistant",
        "小王",
        "Our team",
        "你",
    ];
    let verbs = [
        "明天要去",
        "likes to visit",
        "昨天提到了",
        "asked about",
        "需要准备",
        "wants to cancel",
        "计划研究",
        "remembered",
    ];
    let objects = [
        "北京的长城。",
        "the train station near the office.",
        "下周的会议记录",
        "a quiet coffee shop downtown",
        "机器学习模型的数据",
        "the weather forecast for Sunday?",
        "生日礼物和蛋糕！",
        "the meeting at 3 pm",
    ];
    (0..n)
        .map(|i| {
            format!(
                "{} {} {}",
                subjects[i % subjects.len()],
                verbs[(i / 8) % verbs.len()],
                objects[(i / 64 + i) % objects.len()]
            )
        })
        .collect()
}

fn timed(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

/// The floor: the same graph and session options as the embedder, nothing around the run but
/// reading the output tensor.
fn bare_session(assets: &EmbedAssets) -> Session {
    let env = onnx_environment(&assets.runtime_lib).expect("ONNX Runtime environment");
    Session::builder(&env)
        .expect("session builder")
        .with_optimization_level(GraphOptimizationLevel::Level3)
        .expect("optimisation level")
        .with_intra_threads(1)
        .expect("intra threads")
        .with_inter_threads(1)
        .expect("inter threads")
        .with_intra_op_spinning(false)
        .expect("spinning")
        .commit_from_file(&assets.model)
        .expect("load the model")
}

fn bare_run(session: &mut Session, batch: &TokenBatch) -> f32 {
    let ids = TensorRef::from_array_view(([batch.ids.len()], batch.ids.as_slice())).expect("ids");
    let splits =
        TensorRef::from_array_view(([batch.row_splits.len()], batch.row_splits.as_slice()))
            .expect("row_splits");
    let outputs = session
        .run(ort::inputs!["ids" => ids, "row_splits" => splits])
        .expect("run");
    let (_, data) = outputs["outputs"]
        .try_extract_tensor::<f32>()
        .expect("f32 output");
    data[0]
}

fn per_second(items: usize, d: Duration) -> f64 {
    items as f64 / d.as_secs_f64()
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not and wants a quick smoke run.
    let full = std::env::args().any(|arg| arg == "--bench");
    let (sentence_count, rounds): (usize, usize) = if full { (256, 12) } else { (64, 1) };

    // One-core figures: the global pool gets one thread (as RAYON_NUM_THREADS=1 would), and
    // ONNX Runtime one intra-op thread. The embedder tokenises in the caller's thread anyway.
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .expect("the global thread pool is built once, here");
    let pinned = pin_to_core(CORE);

    let assets = EmbedAssets::locate(None).unwrap_or_else(|e| panic!("{e}"));
    let embedder = OnnxEmbedder::load(&assets, 1).unwrap_or_else(|e| panic!("{e}"));
    let mut session = bare_session(&assets);
    println!(
        "   embedder {}; measuring thread {}",
        embedder.fingerprint(),
        if pinned {
            format!("pinned to core {CORE}")
        } else {
            "unpinned".to_string()
        }
    );

    let texts = sentences(sentence_count);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batches: Vec<&[&str]> = refs.chunks(BATCH).collect();
    let tokenised: Vec<TokenBatch> = batches
        .iter()
        .map(|b| embedder.tokenize(b).expect("tokenize"))
        .collect();
    let tokens: usize = tokenised.iter().map(|t| t.ids.len()).sum();
    println!(
        "   {} sentences, {:.1} tokens each on average (with <s> </s>)",
        texts.len(),
        tokens as f64 / texts.len() as f64
    );

    // Warm-up: first runs allocate arenas and pick kernels.
    for (batch, tokens) in batches.iter().zip(&tokenised).take(2) {
        black_box(embedder.embed_batch(batch).expect("embed"));
        black_box(bare_run(&mut session, tokens));
    }

    let mut hearth = Vec::new();
    let mut bare = Vec::new();
    let mut tokenize = Vec::new();
    for _ in 0..rounds {
        for (batch, tokens) in batches.iter().zip(&tokenised) {
            hearth.push(timed(|| {
                black_box(embedder.embed_batch(black_box(batch)).expect("embed"));
            }));
            bare.push(timed(|| {
                black_box(bare_run(&mut session, black_box(tokens)));
            }));
            tokenize.push(timed(|| {
                black_box(embedder.tokenize(black_box(batch)).expect("tokenize"));
            }));
        }
    }
    let (hearth, bare, tokenize) = (
        Samples::new(hearth),
        Samples::new(bare),
        Samples::new(tokenize),
    );
    report(
        &format!("embed_batch of {BATCH} sentences vs bare Session::run on the same tokens"),
        &hearth,
        "bare Session::run + output read",
        &bare,
        Some(OVERHEAD_BUDGET),
    );
    println!("   tokenise  {}", tokenize.line());
    let batched_rate = per_second(BATCH, hearth.p50());
    println!(
        "   batched: {batched_rate:.0} sentences/s on one core (bare run {:.0}/s; budget ≥ {MIN_SENTENCES_PER_S:.0}): {}",
        per_second(BATCH, bare.p50()),
        if batched_rate >= MIN_SENTENCES_PER_S {
            "within budget"
        } else {
            "OVER BUDGET"
        }
    );

    // One sentence per run, the interactive case.
    let single_count = if full { refs.len() } else { 8 };
    let single_tokens: Vec<TokenBatch> = refs[..single_count]
        .iter()
        .map(|t| embedder.tokenize(&[t]).expect("tokenize"))
        .collect();
    let singles: Vec<(&str, &TokenBatch)> = refs[..single_count]
        .iter()
        .copied()
        .zip(&single_tokens)
        .collect();
    let (single, single_bare) = alternate(rounds.div_ceil(4), &singles, |&(text, tokens)| {
        (
            timed(|| {
                black_box(embedder.embed(black_box(text)).expect("embed"));
            }),
            timed(|| {
                black_box(bare_run(&mut session, black_box(tokens)));
            }),
        )
    });
    report(
        "embed of one sentence vs bare Session::run on its tokens",
        &single,
        "bare Session::run + output read",
        &single_bare,
        None,
    );
    println!(
        "   single: {:.0} sentences/s on one core, p50 latency {:.0} µs",
        per_second(1, single.p50()),
        us(single.p50())
    );

    companion_vs_default(&embedder, &batches, &refs[..single_count], rounds);

    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(if full { 3 } else { 1 }))
        .configure_from_args();
    let batch = batches[0];
    let tokens = &tokenised[0];
    criterion.bench_function(&format!("embed/batch{BATCH}"), |b| {
        b.iter(|| embedder.embed_batch(black_box(batch)).expect("embed"))
    });
    criterion.bench_function(&format!("embed/bare_run_batch{BATCH}"), |b| {
        b.iter(|| bare_run(&mut session, black_box(tokens)))
    });
    criterion.bench_function("embed/single", |b| {
        b.iter(|| embedder.embed(black_box(refs[0])).expect("embed"))
    });
    criterion.final_summary();
}

/// The companion model against the default one: batches and single queries, alternating.
fn companion_vs_default(
    default: &OnnxEmbedder,
    batches: &[&[&str]],
    singles: &[&str],
    rounds: usize,
) {
    let companion = E5Embedder::locate_and_load(None, 1).unwrap_or_else(|e| panic!("{e}"));
    println!("   companion {}", companion.fingerprint());
    black_box(companion.embed_batch(batches[0]).expect("embed"));
    let (e5, base) = alternate(rounds.div_ceil(2), batches, |batch| {
        (
            timed(|| {
                black_box(companion.embed_batch(black_box(batch)).expect("embed"));
            }),
            timed(|| {
                black_box(default.embed_batch(black_box(batch)).expect("embed"));
            }),
        )
    });
    report(
        &format!("companion embed_batch of {BATCH} sentences vs the default model's"),
        &e5,
        "default model embed_batch",
        &base,
        None,
    );
    println!(
        "   companion batched: {:.0} sentences/s on one core",
        per_second(BATCH, e5.p50())
    );
    let (e5, base) = alternate(rounds.div_ceil(4), singles, |text| {
        (
            timed(|| {
                black_box(companion.embed_query(black_box(text)).expect("embed"));
            }),
            timed(|| {
                black_box(default.embed_query(black_box(text)).expect("embed"));
            }),
        )
    });
    report(
        "companion embed_query of one sentence vs the default model's",
        &e5,
        "default model embed_query",
        &base,
        None,
    );
}

/// `rounds` passes over `items`, each item timed by `pair` (two paths back to back, so drift on
/// a shared machine hits both alike); the two paths' samples.
fn alternate<T>(
    rounds: usize,
    items: &[T],
    mut pair: impl FnMut(&T) -> (Duration, Duration),
) -> (Samples, Samples) {
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        for item in items {
            let (a, b) = pair(item);
            first.push(a);
            second.push(b);
        }
    }
    (Samples::new(first), Samples::new(second))
}
