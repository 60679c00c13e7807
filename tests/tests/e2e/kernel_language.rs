//! The kernel answers in the user's language: the texts it writes itself (errors, the
//! tool-round limit) and the placeholders it shows the model follow the CJK share of each
//! input, and a configured language overrides that.

use crate::support::{Harness, within};
use hearth_kernel::graph::Registries;
use hearth_kernel::turn::TurnConfig;
use hearth_kernel::turn::texts::{self, Lang};
use hearth_llm::provider::{ProviderError, Role, ScriptStep};
use hearth_stages::ToolDef;
use serde_json::{Value, json};
use std::time::Duration;

fn failure() -> ScriptStep {
    ScriptStep::Fail(ProviderError::Status {
        status: 500,
        body: "boom".into(),
    })
}

#[test]
fn error_texts_follow_the_language_of_each_input() {
    within(Duration::from_secs(30), || {
        let h = Harness::new(vec![failure(), failure()]);
        let en = h.ask("what is the weather today?");
        assert!(en.error);
        assert_eq!(en.content, "Processing error: api error 500: boom");
        let zh = h.ask("今天天气怎么样？");
        assert!(zh.error);
        assert_eq!(zh.content, "处理错误: api error 500: boom");
        h.kernel.shutdown();
    });
}

#[test]
fn a_configured_language_overrides_the_input() {
    within(Duration::from_secs(30), || {
        let turn = TurnConfig {
            language: Some(Lang::Zh),
            ..TurnConfig::default()
        };
        let h = Harness::with_config(vec![failure()], turn, Registries::default());
        let reply = h.ask("what is the weather today?");
        assert_eq!(
            reply.content,
            texts::processing_error(Lang::Zh, "api error 500: boom")
        );
        h.kernel.shutdown();
    });
}

/// A tool loop cut by the round limit: the placeholder the model saw and the reply are both in
/// the input's language.
fn tool_loop(input: &str) -> (String, Vec<String>) {
    let registries = Registries::default();
    registries
        .tools
        .register(
            ToolDef {
                name: "lookup".into(),
                description: "lookup tool".into(),
                parameters: json!({"type": "object"}),
                ..ToolDef::default()
            },
            hearth_stages::tool_fn(|_: &Value| Ok(json!("found"))),
        )
        .expect("registers");
    let turn = TurnConfig {
        max_tool_turns: 2,
        ..TurnConfig::default()
    };
    let h = Harness::with_config(
        vec![
            ScriptStep::tool_calls(&[("lookup", json!({}))]),
            ScriptStep::tool_calls(&[("lookup", json!({}))]),
        ],
        turn,
        registries,
    );
    let reply = h.ask(input);
    let placeholders = h
        .provider
        .requests()
        .iter()
        .flat_map(|r| r.messages.clone())
        .filter(|m| m.role == Role::User && texts::is_continuation(&m.content))
        .map(|m| m.content)
        .collect();
    h.kernel.shutdown();
    (reply.content, placeholders)
}

#[test]
fn placeholders_and_the_round_limit_speak_the_input_language() {
    within(Duration::from_secs(30), || {
        let (reply, seen) = tool_loop("look this up for me please");
        assert_eq!(seen, [texts::continue_after_tools(Lang::En)]);
        assert_eq!(reply, texts::max_tool_turns(Lang::En, 2));
        assert!(reply.starts_with("[system]"), "{reply}");
        let (reply, seen) = tool_loop("请帮我查一下这个");
        assert_eq!(seen, ["请根据以上工具结果继续。"]);
        assert_eq!(reply, "[系统] 已达到最大工具轮次 2，任务中止。");
    });
}
