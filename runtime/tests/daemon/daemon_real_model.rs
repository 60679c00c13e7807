//! The real local model (llama.cpp + SmolLM2-135M, installed by `make setup`) end to end.
//! Assertions are on structure — streaming, replies, stop — never on what a 135M model says.

use crate::harness::{Daemon, read_rest, stderr, within};
use hearth_engine::CancelToken;
use hearth_ipc::{EventKind, KindMask, ReadResult};
use hearth_kernel::graph::{self, GraphConfig, Registries};
use hearth_kernel::turn::TurnConfig;
use hearth_llm::adapter::{Adapter, bundled};
use hearth_llm::http::HttpClient;
use hearth_llm::provider::SourceConfig;
use hearth_llm::provider::{
    ChatProvider, ChatRequest, LuaSource, Message, ProviderError, Role, StreamChunk, ToolCallOut,
};
use hearth_runtime::embedded::{EmbeddedAssets, EmbeddedOptions, EmbeddedServer};
use hearth_stages::ToolDef;
use parking_lot::Mutex;
use serde_json::{Value, json};
use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn embedded_daemon() -> Daemon {
    // One model thread: the tests share two cores with the build and each other.
    Daemon::start("[embedded]\nenabled = true\nthreads = 1\nctx = 4096\n")
}

#[test]
fn a_streamed_answer_from_the_embedded_model() {
    within(Duration::from_secs(240), || {
        let daemon = embedded_daemon();
        let (mut child, mut out) = daemon.spawn(&["send", "Say hello in one short sentence."]);
        let started = Instant::now();
        let mut first = [0u8; 1];
        out.read_exact(&mut first).expect("a first streamed byte");
        let first_at = started.elapsed();
        let rest = read_rest(out);
        let last_at = started.elapsed();
        let status = child.wait().expect("exits");
        assert!(status.success(), "hearth send failed");
        let text = format!("{}{}", first[0] as char, rest);
        assert!(text.trim().len() > 1, "an answer: {text:?}");
        // Streamed, not printed at the end: the tokens after the first take tens of
        // milliseconds to generate, so the last byte lags the first.
        assert!(
            last_at.saturating_sub(first_at) >= Duration::from_millis(20),
            "first byte at {first_at:?}, last at {last_at:?}: not streamed"
        );
        let status = daemon.run(&["status"]);
        let status: serde_json::Value = serde_json::from_slice(&status.stdout).expect("JSON");
        assert_eq!(status["sources"][0]["name"], "embedded");
        assert_eq!(status["sources"][0]["available"], true);
        // The model server's supervisor reports it, as it does a plugin.
        let server = &status["embedded_server"];
        assert_eq!(server["state"], "running", "{status:#}");
        assert!(server["pid"].as_u64().is_some_and(|p| p > 0), "{status:#}");
        assert_eq!(server["restarts"], 0, "{status:#}");
    });
}

#[test]
fn stop_during_the_embedded_models_prefill() {
    within(Duration::from_secs(240), || {
        let daemon = embedded_daemon();
        // ~1,800 prompt tokens (the input is in the timeline and the message): seconds of prefill.
        let long: String = (0..100)
            .map(|i| format!("Item {i} is a small red box. "))
            .collect();
        let (mut child, out) = daemon.spawn(&["send", &long, "How many boxes are there?"]);
        std::thread::sleep(Duration::from_millis(800));
        let asked = Instant::now();
        let stop = daemon.run(&["stop"]);
        assert!(stop.status.success(), "{}", stderr(&stop));
        let text = read_rest(out);
        let ended = asked.elapsed();
        let status = child.wait().expect("exits");
        assert!(status.success(), "send ended with {status}: {text:?}");
        assert!(ended < Duration::from_secs(3), "stop took {ended:?}");
        assert!(
            text.contains("Generation stopped.")
                || text.contains("已停止生成。")
                || !text.trim().is_empty(),
            "{text:?}"
        );
        // The daemon and the model server keep serving after the cut.
        let after = daemon.run(&["send", "Say yes."]);
        assert!(after.status.success(), "{}", stderr(&after));
    });
}

/// Few-shot examples in front of every request: the 135M model answers tool questions with
/// prose zero-shot, but calls tools reliably after three examples (temperature 0).
struct FewShot(Arc<dyn ChatProvider>);

impl ChatProvider for FewShot {
    fn name(&self) -> &str {
        "few-shot"
    }

    fn chat_stream(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        sink: &mut dyn FnMut(StreamChunk),
    ) -> Result<(), ProviderError> {
        let mut req = request.clone();
        req.temperature = Some(0.0);
        let mut shots = vec![Message::system(
            "You answer weather questions only by calling get_weather.",
        )];
        for (i, city) in ["London", "Tokyo", "Berlin"].iter().enumerate() {
            shots.push(Message::user(format!("What is the weather in {city}?")));
            let mut call = Message::new(Role::Assistant, "");
            call.tool_calls.push(ToolCallOut {
                id: format!("shot_{i}"),
                name: "get_weather".into(),
                arguments: json!({"city": city}),
            });
            shots.push(call);
        }
        // The examples take the place of the kernel's system messages (prompt, timeline, source
        // note), which a 135M model cannot weigh; everything else the kernel built is kept.
        req.messages.retain(|m| m.role != Role::System);
        req.messages.splice(0..0, shots);
        self.0.chat_stream(&req, cancel, sink)
    }
}

#[test]
fn the_embedded_model_streams_a_tool_call_the_kernel_executes() {
    within(Duration::from_secs(300), || {
        let assets =
            EmbeddedAssets::locate(None).expect("embedded model installed by `make setup`");
        let opts = EmbeddedOptions {
            threads: 1,
            ..EmbeddedOptions::default()
        };
        let mut server = EmbeddedServer::start(assets, opts).expect("embedded server starts");
        let url = server.base_url_source();
        let cfg = SourceConfig {
            name: "embedded".into(),
            base_url: server.base_url(),
            model: "smollm2-135m".into(),
            adapter: "openai".into(),
            max_tokens: 128,
            ..SourceConfig::default()
        };
        let adapter = Arc::new(
            Adapter::load("openai.lua", bundled::source("openai").expect("bundled"))
                .expect("loads"),
        );
        let source =
            LuaSource::with_base_url(cfg, adapter, HttpClient::new(), Arc::new(move || url.get()));
        let registries = Registries::default();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let seen = calls.clone();
        let def = ToolDef {
            name: "get_weather".into(),
            description: "Current weather of a city".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            ..ToolDef::default()
        };
        registries
            .tools
            .register(
                def,
                hearth_stages::tool_fn(move |args: &Value| {
                    seen.lock().push(args.clone());
                    Ok(json!("sunny, 21 degrees"))
                }),
            )
            .expect("registers");
        let turn = TurnConfig {
            max_tool_turns: 2,
            system_prompt: "You are a helpful assistant.".into(),
            ..TurnConfig::default()
        };
        let graph_cfg = GraphConfig {
            turn,
            agent_id: "test".into(),
            ..GraphConfig::unpinned(2)
        };
        let kernel = graph::build(graph_cfg, Arc::new(FewShot(Arc::new(source))), registries)
            .expect("kernel");
        let mut chain = kernel.handle().subscribe(KindMask::of(&[
            EventKind::AgentLlmChain,
            EventKind::ToolCall,
        ]));
        let reply = kernel
            .handle()
            .send_text("cli", "What is the weather in Paris?")
            .recv_timeout(Duration::from_secs(240))
            .expect("a reply");
        assert!(!reply.skipped && !reply.error, "{reply:?}");
        let calls = calls.lock().clone();
        assert!(
            !calls.is_empty(),
            "the model's tool call reached the tool; reply: {reply:?}"
        );
        assert!(calls[0]["city"].is_string(), "{calls:?}");
        let mut buf = Vec::new();
        let mut first_chain = None;
        let mut tool_event = None;
        while let ReadResult::Event { kind, .. } = chain.try_next(&mut buf) {
            let v: Value = serde_json::from_slice(&buf).expect("envelope");
            match kind {
                EventKind::AgentLlmChain if first_chain.is_none() => {
                    first_chain = Some(v["payload"].clone())
                }
                EventKind::ToolCall if tool_event.is_none() => {
                    tool_event = Some(v["payload"].clone())
                }
                _ => {}
            }
        }
        let first_chain = first_chain.expect("agent_llm_chain published");
        assert_eq!(
            first_chain["tool_calls"][0]["name"], "get_weather",
            "{first_chain}"
        );
        assert_eq!(
            tool_event.expect("tool_call published")["result"],
            "sunny, 21 degrees"
        );
        kernel.shutdown();
        server.stop();
    });
}

/// The model distiller through the real model: a pruned turn goes to it as a consolidation
/// task and its answer is settled (whatever a 135M model says, the items are recorded as done
/// or waiting for a retry, and the user's turns are answered as before).
#[test]
fn cold_turns_are_distilled_through_the_embedded_model() {
    within(Duration::from_secs(300), || {
        let daemon = Daemon::start(
            "memory_model = false\ngraph_heartbeat_secs = 1\ngraph_model_secs = 1\n\
             graph_model_idle_secs = 0\n[agent]\nmax_context_size = 4\n\
             [embedded]\nenabled = true\nthreads = 1\nctx = 4096\n",
        );
        for text in [
            "I live in Porto and my sister Ana is a nurse.",
            "Say yes.",
            "Say no.",
            "Say maybe.",
            "Say ok.",
            "Say fine.",
        ] {
            let out = daemon.run(&["send", text]);
            assert!(out.status.success(), "{text}: {}", stderr(&out));
        }
        let deadline = Instant::now() + Duration::from_secs(200);
        let model = loop {
            let out = daemon.run(&["memory", "stats"]);
            assert!(out.status.success(), "{}", stderr(&out));
            let stats: Value = serde_json::from_slice(&out.stdout).expect("stats are JSON");
            let model = stats["model"].clone();
            if model["answered"].as_u64().unwrap_or(0) >= 1 && model["pending"].is_null() {
                break model;
            }
            assert!(Instant::now() < deadline, "no answer settled: {stats:#}");
            std::thread::sleep(Duration::from_millis(500));
        };
        assert_eq!(model["on"], true);
        let recorded =
            model["items_done"].as_u64().unwrap() + model["items_waiting"].as_u64().unwrap();
        assert!(recorded >= 1, "every asked item is recorded: {model:#}");
        // The user is still answered after the consolidation ran.
        let out = daemon.run(&["send", "Say hello."]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!String::from_utf8_lossy(&out.stdout).trim().is_empty());
    });
}
