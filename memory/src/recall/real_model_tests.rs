//! With the real installed model, a fact told once is found again from a paraphrase in Chinese or
//! English; without the model these fail with "run `make setup`" instead of passing vacuously.

use std::sync::{Arc, OnceLock};

use super::test_support::{TempDir, user};
use super::*;
use crate::test_support::watchdog;
use crate::{ContextEvent, Embedder, OnnxEmbedder};

/// The installed model, loaded once for all tests of this binary.
fn real_model() -> Arc<dyn Embedder> {
    static MODEL: OnceLock<Arc<OnnxEmbedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| match OnnxEmbedder::locate_and_load(None, 1) {
            Ok(m) => Arc::new(m),
            Err(e) => panic!("{e}"),
        })
        .clone()
}

/// A conversation where each fact is said once among unrelated turns.
fn bilingual_history() -> Vec<ContextEvent> {
    let turns = [
        "Can you suggest a quick recipe with chicken for tonight?",
        "What's the weather like in Berlin this weekend?",
        "帮我写一封请假邮件，下周一要去看牙医。",
        "My sister Emma is allergic to peanuts, so keep them out of anything you cook for her.",
        "推荐几部适合周末看的科幻电影吧。",
        "How do I reset the router when the internet stops working?",
        "我的车停在公司地下车库B2层的37号车位。",
        "Give me a short workout I can do in a hotel room.",
        "最近在学做红烧肉，火候总是掌握不好。",
        "What is a good way to learn Spanish vocabulary?",
        "帮我算一下每个月房贷还多少钱。",
        "I need a gift idea for my father's birthday; he likes fishing.",
    ];
    turns
        .iter()
        .enumerate()
        .map(|(i, t)| user(1_700_000_000_000 + i as i64 * 60_000, t))
        .collect()
}

#[test]
fn a_fact_told_once_is_the_top_hit_for_a_paraphrase_with_the_real_model() {
    watchdog(120, || {
        let dir = TempDir::new("real");
        let mut cold = ColdContext::new(dir.store(), Some(real_model()));
        let ids = cold
            .archive_events(bilingual_history(), "import", 1_800_000_000_000)
            .expect("archive");
        for (question, fact) in [
            ("Which food must Emma avoid?", 3),
            ("我把汽车放在哪儿了？", 6),
            ("Where did I leave my vehicle?", 6),
            ("艾玛对什么食物过敏？", 3),
        ] {
            assert_top_hit(&mut cold, question, ids[fact]);
        }
    });
}

/// The first recalled entry for `question` (asked well after the history) is `want`.
fn assert_top_hit(cold: &mut ColdContext, question: &str, want: i64) {
    let hits = cold.recall(question, 3, 1_800_000_000_000).expect("recall");
    assert_eq!(
        hits[0].id, want,
        "{question}: top hit was {:?}",
        hits[0].text
    );
}

#[test]
fn keyword_path_still_finds_the_fact_without_the_model() {
    watchdog(60, || {
        let dir = TempDir::new("real-sparse");
        let mut cold = ColdContext::new(dir.store(), None);
        let ids = cold
            .archive_events(bilingual_history(), "import", 1_800_000_000_000)
            .expect("archive");
        for (question, fact) in [
            ("Is Emma allergic to anything?", 3),
            ("车停在哪个车位？", 6),
            ("我的车在B2层吗", 6),
        ] {
            assert_top_hit(&mut cold, question, ids[fact]);
        }
    });
}
