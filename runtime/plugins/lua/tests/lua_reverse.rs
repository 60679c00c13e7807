//! `sdk.call` from Lua handlers: the reverse calls a process plugin makes, through the same
//! capability gate of the manifest and the same dispatch into the kernel port, bounded per call.

mod support;

use hearth_lua_plugins::MAX_REVERSE_CALLS;
use hearth_plugin_host::{Injection, KernelPort, RestartPolicy};
use hearth_rpc::{Grants, HandlerError as RpcError};
use hearth_stages::{CallContext, Stage, StageContext};
use hearth_testkit::within;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use support::{WATCHDOG, failed, host_with, script, start_in};

/// A kernel whose memory answers every search with one item naming the query.
#[derive(Default)]
struct Memory {
    searches: AtomicUsize,
}

impl KernelPort for Memory {
    fn publish(&self, _kind: &str, _payload: &Value) {}

    fn inject(
        &self,
        plugin: &str,
        _channel: &str,
        _text: &str,
        _how: Injection,
    ) -> Result<(), RpcError> {
        Err(RpcError::new(
            hearth_rpc::ErrorKind::Unavailable,
            format!("{plugin}: no inputs here"),
        ))
    }

    fn memory_search(&self, query: &str, top_k: usize) -> Result<Value, RpcError> {
        self.searches.fetch_add(1, Ordering::Relaxed);
        Ok(json!({"items": [{"id": 1, "text": format!("found {query} top {top_k}")}]}))
    }
}

fn call() -> CallContext {
    CallContext::kernel(Duration::from_secs(10))
}

#[test]
fn granted_calls_work_denied_ones_name_the_capability_and_a_flood_is_bounded() {
    within(WATCHDOG, || {
        let memory = Arc::new(Memory::default());
        let host = host_with(Arc::clone(&memory) as Arc<dyn KernelPort>);
        let policy = RestartPolicy {
            max_crashes: 100,
            ..RestartPolicy::default()
        };
        let grants = Grants::from_manifest(&["memory"]).expect("known capability");
        let _plugin = start_in(&host, "seeker", &script("reverse.lua"), policy, grants);
        let tools = &host.tables.tools;

        let found = tools
            .execute(&call(), "search", &json!({"query": "milk"}))
            .expect("memory is granted");
        assert_eq!(found["items"][0]["text"], "found milk top 2");
        let mut ctx = StageContext::with_final_text("reply");
        let run = host
            .tables
            .stages
            .run(Stage::BeforeOutput, &call(), &mut ctx);
        assert!(run.errors.is_empty(), "{:?}", run.errors);
        assert_eq!(ctx.final_text, "reply / found recent top 1");

        let denied = failed(tools.execute(&call(), "sources", &json!({})));
        assert!(
            denied.contains("llm.listSources needs capability \"llm\"")
                && denied.contains("does not grant"),
            "{denied}"
        );
        let refused = failed(tools.execute(&call(), "register", &json!({})));
        assert!(refused.contains("sdk.stage"), "{refused}");

        let before = memory.searches.load(Ordering::Relaxed);
        let flood = failed(tools.execute(&call(), "flood", &json!({})));
        assert!(
            flood.contains(&format!("more than {MAX_REVERSE_CALLS} reverse calls")),
            "{flood}"
        );
        let made = memory.searches.load(Ordering::Relaxed) - before;
        assert_eq!(made, MAX_REVERSE_CALLS as usize);
        // The next call has a fresh allowance.
        let found = tools
            .execute(&call(), "search", &json!({"query": "again"}))
            .expect("after the flood");
        assert_eq!(found["items"][0]["text"], "found again top 2");
    });
}

#[test]
fn a_manifest_without_the_capability_is_denied_every_memory_call() {
    within(WATCHDOG, || {
        let memory = Arc::new(Memory::default());
        let host = host_with(Arc::clone(&memory) as Arc<dyn KernelPort>);
        let grants = Grants::from_manifest(&["llm"]).expect("known capability");
        let _plugin = start_in(
            &host,
            "seeker",
            &script("reverse.lua"),
            RestartPolicy::default(),
            grants,
        );
        let denied = failed(
            host.tables
                .tools
                .execute(&call(), "search", &json!({"query": "x"})),
        );
        assert!(
            denied.contains("memory.search needs capability \"memory\""),
            "{denied}"
        );
        assert_eq!(memory.searches.load(Ordering::Relaxed), 0);
    });
}
