//! A fact told in turn 1 is pruned out of the working window by 40 unrelated turns, then
//! recalled into the prompt when asked about in turn 42 — in English and in Chinese.

use crate::harness::{Daemon, source, stderr, within};
use hearth_testkit::llm_server::LlmServer;
use serde_json::Value;
use std::time::Duration;

const ENGLISH_FILLER: [&str; 10] = [
    "What is a good recipe for tomato soup?",
    "How do I fix a squeaky door hinge?",
    "Recommend a science fiction novel.",
    "How many minutes should I boil an egg?",
    "What is the capital of Australia?",
    "Explain how solar panels work.",
    "Give me a tip for growing basil indoors.",
    "How do I reset my wifi router?",
    "What stretches help lower back pain?",
    "Suggest a board game for four players.",
];

const CHINESE_FILLER: [&str; 10] = [
    "番茄炒蛋怎么做？",
    "怎么修理漏水的水龙头？",
    "推荐一本科幻小说。",
    "鸡蛋要煮几分钟？",
    "澳大利亚的首都是哪里？",
    "太阳能板是怎么工作的？",
    "在室内怎么种罗勒？",
    "路由器怎么重启？",
    "腰疼可以做哪些拉伸？",
    "推荐一个适合四个人玩的桌游。",
];

fn system_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] == "system")
                .filter_map(|m| m["content"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn told_pruned_recalled(fact: &str, filler: &[&str], question: &str, needle: &str) {
    let server = LlmServer::start();
    let daemon = Daemon::start(&source("remote", &server.base_url, 0));
    let told = daemon.run(&["send", fact]);
    assert!(told.status.success(), "{}", stderr(&told));
    for i in 0..40 {
        let text = format!("{} ({i})", filler[i % filler.len()]);
        let out = daemon.run(&["send", &text]);
        assert!(out.status.success(), "turn {i}: {}", stderr(&out));
    }
    let asked = daemon.run(&["send", question]);
    assert!(asked.status.success(), "{}", stderr(&asked));
    let seen = server.seen();
    assert_eq!(seen.len(), 42);
    let last = system_texts(&seen[41].body);
    let timeline = last
        .iter()
        .find(|t| t.starts_with("【对话时序】") || t.starts_with("Earlier in this conversation:"))
        .cloned()
        .unwrap_or_default();
    assert!(
        !timeline.contains(needle),
        "turn 1 was pruned out of the working window: {timeline}"
    );
    // English input reads an English header (the original's Chinese one turns a small model
    // to Chinese); Chinese input keeps the original's.
    let header = if question.is_ascii() {
        hearth_kernel::turn::texts::MEMORY_HEADER_EN
    } else {
        hearth_memory::INJECT_HEADER
    };
    let recalled = last
        .iter()
        .find(|t| t.starts_with(header))
        .cloned()
        .unwrap_or_default();
    assert!(
        recalled.contains(needle),
        "the fact is recalled into turn 42's prompt; system messages: {last:#?}"
    );
    // The block sits after the timeline, right before the input: recalled afresh for each
    // input, it would otherwise make a model server read the whole timeline again every turn.
    let messages = seen[41].body["messages"].as_array().expect("messages");
    let at = |pred: &dyn Fn(&serde_json::Value) -> bool| messages.iter().position(pred);
    let block_at = at(&|m| m["content"].as_str() == Some(recalled.as_str())).expect("block");
    let timeline_at = at(&|m| m["content"].as_str() == Some(timeline.as_str())).expect("timeline");
    let user_at = at(&|m| m["role"] == "user").expect("the input");
    assert_eq!((timeline_at + 1, block_at + 1), (block_at, user_at));
    // Nothing was lost on the way: the fact sits in cold context too.
    let db = daemon.dir.join("memory.db");
    let store = hearth_memory::StoreReader::open(&db).expect("store");
    let archived = store.cold_count().expect("count");
    assert!(archived > 0);

    // The companion model's vectors are never computed on the turn path; once the daemon is
    // idle it back-fills every archived entry.
    let companion = companion_fingerprint();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let store = hearth_memory::StoreReader::open(&db).expect("store");
        let missing = store.cold_side_missing(&companion).expect("missing");
        let filled = store.cold_side_vectors(&companion).count() as u64;
        if missing.is_empty() {
            assert!(filled > 0 && filled <= archived, "{filled} of {archived}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} of {archived} entries still without a companion vector",
            missing.len()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The installed companion model's fingerprint, as the daemon names its vectors.
fn companion_fingerprint() -> String {
    let assets = hearth_memory::E5Assets::locate(None).expect("installed by `make setup`");
    fingerprint(
        hearth_memory::E5_SMALL_MODEL_NAME,
        &assets.graph_sha256,
        384,
    )
}

/// The installed main model's fingerprint, as the daemon names its vectors.
fn main_fingerprint() -> String {
    let assets = hearth_memory::EmbedAssets::locate(None).expect("installed by `make setup`");
    fingerprint(hearth_memory::USE_M3_MODEL_NAME, &assets.model_sha256, 512)
}

fn fingerprint(model: &str, sha256: &str, dim: usize) -> String {
    hearth_memory::Fingerprint::new(model, sha256, dim, hearth_memory::Pooling::Mean)
        .expect("fingerprint")
        .to_string()
}

#[test]
fn an_english_fact_is_pruned_then_recalled_at_turn_42() {
    within(Duration::from_secs(240), || {
        told_pruned_recalled(
            "Remember this: my cat is called Mochi and she is seven years old.",
            &ENGLISH_FILLER,
            "What is the name of my cat?",
            "Mochi",
        );
    });
}

#[test]
fn a_chinese_fact_is_pruned_then_recalled_at_turn_42() {
    within(Duration::from_secs(240), || {
        told_pruned_recalled(
            "记住：我的猫叫小米，今年七岁。",
            &CHINESE_FILLER,
            "我的猫叫什么名字？",
            "小米",
        );
    });
}

/// A store remembered while no model was installed: the daemon started with one embeds it in
/// idle time, and a question that shares no word with a remembered fact then finds it by
/// meaning, as it would have had the model been there all along.
#[test]
fn a_history_remembered_without_the_model_is_embedded_once_it_is_installed() {
    within(Duration::from_secs(240), || {
        const FACT: &str = "My daughter Lena plays the violin every evening.";
        let server = LlmServer::start();
        let now = hearth_engine::now_ms();
        let daemon = Daemon::start_with(&source("remote", &server.base_url, 0), |dir| {
            let store = hearth_memory::Store::open(dir.join("memory.db")).expect("store");
            let mut cold = hearth_memory::ColdContext::new(store, None);
            let day = 24 * 60 * 60 * 1000;
            let mut events: Vec<_> = ENGLISH_FILLER
                .iter()
                .enumerate()
                .map(|(i, text)| {
                    hearth_memory::ContextEvent::new(now - (20 - i as i64) * day, "cli", *text)
                })
                .collect();
            events.push(hearth_memory::ContextEvent::new(now - 5 * day, "cli", FACT));
            cold.archive_events(events, "import", now - day)
                .expect("archived with no model");
        });
        let db = daemon.dir.join("memory.db");
        let fp = main_fingerprint();
        let deadline = std::time::Instant::now() + Duration::from_secs(90);
        loop {
            let store = hearth_memory::StoreReader::open(&db).expect("store");
            let stale = store.cold_stale_vectors(&fp).expect("stale");
            if stale.is_empty() {
                assert_eq!(store.cold_vectors(&fp).count(), ENGLISH_FILLER.len() + 1);
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{} entries still without a vector of {fp}",
                stale.len()
            );
            std::thread::sleep(Duration::from_millis(200));
        }

        // "my" is the only word in common, and too common to count.
        let asked = daemon.run(&["send", "Tell me about my child's music lessons"]);
        assert!(asked.status.success(), "{}", stderr(&asked));
        let seen = server.seen();
        let recalled = system_texts(&seen[0].body)
            .into_iter()
            .find(|t| t.starts_with(hearth_kernel::turn::texts::MEMORY_HEADER_EN))
            .unwrap_or_default();
        assert!(
            recalled.contains(FACT),
            "{:#?}",
            system_texts(&seen[0].body)
        );
    });
}
