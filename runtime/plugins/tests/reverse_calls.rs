//! Memory, LLM and settings reverse calls from a real plugin process, through the capability
//! gate, the kernel port and the settings registry's SQLite file.

mod support;

use std::sync::Arc;
use std::time::Duration;

use hearth_plugin_host::{PluginHost, PluginState};
use hearth_settings::{SettingDef, SettingKind, Settings};
use serde_json::{Value, json};
use support::{CallTool, Fixture, LONG, sdk_binary, watchdog};

/// Starts the conformance plugin with `capabilities` and a settings registry in the data dir.
fn start(fx: &Fixture, capabilities: &str) -> (Arc<PluginHost>, Arc<Settings>) {
    let settings = Arc::new(Settings::open(fx.data.path()).expect("settings"));
    fx.install(
        "conformance",
        &sdk_binary("hearth-plugin-conformance"),
        &format!(r#","capabilities":{capabilities}"#),
    );
    let host = fx.host_cfg(|cfg| cfg.settings = Some(Arc::clone(&settings)));
    host.start_all().expect("order");
    let s = host
        .wait_for("conformance", LONG, |s| s.state == PluginState::Running)
        .expect("slot");
    assert_eq!(s.state, PluginState::Running, "{s:?}");
    (host, settings)
}

fn call(fx: &Fixture, method: &str, params: Value) -> Result<Value, String> {
    fx.tables
        .tools
        .call_tool("call", &json!({"method": method, "params": params}))
}

/// A call the plugin makes as itself, not from inside the tool's call (a sync injection from
/// inside its own tool call is refused: its turn would wait for the tool).
fn call_detached(fx: &Fixture, method: &str, params: Value) -> Result<Value, String> {
    fx.tables.tools.call_tool(
        "call",
        &json!({"method": method, "params": params, "detached": true}),
    )
}

#[test]
fn memory_calls_reach_the_kernel_port_and_llm_calls_are_denied_without_the_capability() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let (host, _settings) = start(&fx, r#"["memory"]"#);
        let got = call(
            &fx,
            "memory.recall",
            json!({"query": ["tea", "cups"], "top_k": 2}),
        );
        assert_eq!(
            got.expect("recall")["text"],
            "conformance asked for 2 about tea cups"
        );
        call(
            &fx,
            "memory.commit",
            json!({"content": "likes tea", "summary": "tea"}),
        )
        .expect("commit");
        assert_eq!(
            *fx.seen.committed.lock().unwrap(),
            [("conformance".into(), "likes tea".into(), "tea".into())]
        );
        let err = call(&fx, "memory.commit", json!({})).expect_err("no content");
        assert!(err.contains("content must be a string"), "{err}");
        for method in ["llm.complete", "llm.listSources"] {
            let err = call(
                &fx,
                method,
                json!({"messages": [{"role": "user", "content": "hi"}]}),
            )
            .expect_err("llm not granted");
            assert!(err.contains(method) && err.contains("\"llm\""), "{err}");
        }
        host.shutdown();
    });
}

#[test]
fn llm_calls_complete_through_the_kernel_when_granted() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let (host, _settings) = start(&fx, r#"["llm"]"#);
        let got = call(
            &fx,
            "llm.complete",
            json!({"messages": [{"role": "system", "content": "terse"}, {"role": "user", "content": "hi"}]}),
        );
        assert_eq!(got.expect("complete")["text"], "user said hi");
        let sources = call(&fx, "llm.listSources", json!({})).expect("sources");
        assert_eq!(sources["sources"][0]["name"], "local");
        let err = call(&fx, "llm.complete", json!({"messages": []})).expect_err("empty");
        assert!(err.contains("messages is empty"), "{err}");
        let err =
            call(&fx, "memory.recall", json!({"query": "x"})).expect_err("memory not granted");
        assert!(err.contains("\"memory\""), "{err}");
        host.shutdown();
    });
}

#[test]
fn inputs_kept_out_of_memory_say_so_and_a_sync_input_waits_for_its_reply() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let (host, _settings) = start(&fx, r#"["io"]"#);
        call(
            &fx,
            "io.injectTextNoMem",
            json!({"channel": "side", "text": "quiet"}),
        )
        .expect("no-memory inject");
        call(
            &fx,
            "io.injectText",
            json!({"text": "hushed", "options": {"no_memory": true}}),
        )
        .expect("inject with the option");
        call(&fx, "io.injectText", json!({"text": "loud"})).expect("plain inject");
        // A priority that is not L1..L4 is refused, never run at the default.
        for (method, params) in [
            (
                "io.injectText",
                json!({"text": "odd", "options": {"priority": "urgent"}}),
            ),
            (
                "io.injectText",
                json!({"text": "odd", "options": {"priority": 3}}),
            ),
            ("io.submit", json!({"text": "odd", "priority": "L9"})),
        ] {
            let err = call(&fx, method, params).expect_err("a malformed priority");
            assert!(err.contains("is not L1..L4"), "{method}: {err}");
        }
        let err = call(&fx, "io.injectInputSync", json!({"text": "hi"})).expect_err("in its call");
        assert!(err.contains("inside a running tool call"), "{err}");
        let got = call_detached(&fx, "io.injectInputSync", json!({"text": "how are you"}))
            .expect("a reply");
        assert_eq!(
            got,
            json!({"reply": "answer to how are you", "request_id": "r0"})
        );
        let err =
            call_detached(&fx, "io.injectInputSync", json!({"text": "fail"})).expect_err("failed");
        assert!(err.contains("the model broke"), "{err}");
        let seen: Vec<(String, bool)> = fx
            .seen
            .injected
            .lock()
            .unwrap()
            .iter()
            .map(|(_, text, how)| (text.clone(), how.no_memory))
            .collect();
        assert_eq!(
            seen,
            [
                ("quiet".to_owned(), true),
                ("hushed".to_owned(), true),
                ("loud".to_owned(), false),
                ("how are you".to_owned(), false),
                ("fail".to_owned(), false),
            ]
        );
        assert_eq!(
            fx.seen.submitted.lock().unwrap()[0].1,
            2,
            "the reply was asked for until it came"
        );
        let err = call(&fx, "doc.query", json!({"text": "x"})).expect_err("not granted");
        assert!(err.contains("\"doc_memory\""), "{err}");
        host.shutdown();
    });
}

/// The media injections carry their blocks to the kernel port (as interrupts, clamped to L3,
/// for `io.injectInterruptMedia`); a media injection without blocks, or with blocks that are
/// not content-block objects, is refused before it reaches the kernel.
#[test]
fn media_injections_bring_their_blocks_and_need_some() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let (host, _settings) = start(&fx, r#"["io"]"#);
        let photo =
            json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}});
        call(
            &fx,
            "io.injectMedia",
            json!({"channel": "camera", "text": "the door", "blocks": [photo]}),
        )
        .expect("inject media");
        call(
            &fx,
            "io.injectInterruptMedia",
            json!({"channel": "camera", "blocks": [photo], "options": {"priority": "L4"}}),
        )
        .expect("an interrupt without text");
        let got = call_detached(
            &fx,
            "io.injectMediaSync",
            json!({"text": "what is this", "blocks": [photo, photo]}),
        )
        .expect("a reply");
        assert_eq!(got["reply"], "answer to what is this");
        call(
            &fx,
            "io.submit",
            json!({"text": "and this", "blocks": [photo]}),
        )
        .expect("submitted with media");
        for bad in [
            json!({"text": "no blocks"}),
            json!({"blocks": []}),
            json!({"blocks": ["data:image/png;base64,AA"]}),
            json!({"blocks": [photo], "text": 7}),
        ] {
            let err = call(&fx, "io.injectMedia", bad.clone()).expect_err("refused");
            assert!(
                err.contains("io.injectMedia")
                    && (err.contains("blocks must be") || err.contains("text must be")),
                "{bad}: {err}"
            );
        }
        let seen = fx.seen.injected.lock().unwrap().clone();
        let brief: Vec<_> = seen
            .iter()
            .map(|(channel, text, how)| {
                (
                    channel.as_str(),
                    text.as_str(),
                    how.interrupt,
                    how.priority,
                    how.media.len(),
                )
            })
            .collect();
        assert_eq!(
            brief,
            [
                ("camera", "the door", false, None, 1),
                ("camera", "", true, Some(hearth_rpc::Priority::L3), 1),
                ("conformance", "what is this", false, None, 2),
                ("conformance", "and this", false, None, 1),
            ]
        );
        assert_eq!(seen[0].2.media[0], photo, "the block as the plugin sent it");

        // From inside a tool's call, the blocks join that call's result.
        let got = call(&fx, "io.setToolBlocks", json!({"blocks": [photo]})).expect("set");
        assert_eq!(got, json!([{"type": "text", "text": "{}"}, photo]));
        let got = call(&fx, "io.injectText", json!({"text": "later"})).expect("inject");
        assert_eq!(got, json!({}), "blocks go with their own call only");
        let err = call(&fx, "io.setToolBlocks", json!({"blocks": "a photo"})).expect_err("bad");
        assert!(err.contains("blocks must be"), "{err}");
        host.shutdown();
    });
}

#[test]
fn a_plugin_reads_and_writes_only_its_own_settings_unless_granted() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let (host, settings) = start(&fx, r#"["memory"]"#);
        settings
            .define(SettingDef::new(
                "core.workers",
                SettingKind::Integer,
                json!(2),
                "workers",
            ))
            .unwrap();
        let def = json!({"key": "greeting", "kind": "string", "default": "hello", "description": "What it says"});
        call(&fx, "settings.registerDef", json!({"def": def})).expect("define");
        assert_eq!(
            call(&fx, "settings.get", json!({"key": "greeting"})).unwrap()["value"],
            "hello"
        );
        call(
            &fx,
            "settings.set",
            json!({"key": "greeting", "value": "hi"}),
        )
        .expect("set");
        assert_eq!(
            settings.get("plugin.conformance.greeting").unwrap(),
            json!("hi")
        );
        let err =
            call(&fx, "settings.set", json!({"key": "greeting", "value": 3})).expect_err("typed");
        assert!(err.contains("takes a string"), "{err}");
        assert_eq!(
            settings.get("plugin.conformance.greeting").unwrap(),
            json!("hi")
        );
        // Re-registering with a new default keeps the user's value.
        let def = json!({"key": "greeting", "kind": "string", "default": "howdy", "description": "What it says"});
        call(&fx, "settings.registerDef", json!({"def": def})).expect("redefine");
        assert_eq!(
            call(&fx, "settings.get", json!({"key": "greeting"})).unwrap()["value"],
            "hi"
        );
        for key in ["core.workers", "plugin.files.roots"] {
            let err = call(&fx, "settings.get", json!({"key": key})).expect_err("foreign");
            assert!(err.contains("may not access") && err.contains(key), "{err}");
            assert!(call(&fx, "settings.set", json!({"key": key, "value": 1})).is_err());
        }
        let err =
            call(&fx, "settings.getCore", json!({"key": "workers"})).expect_err("not granted");
        assert!(err.contains("settings_cross"), "{err}");
        let listed = call(&fx, "settings.list", json!({})).expect("list");
        assert_eq!(
            listed["settings"].as_array().map(Vec::len),
            Some(1),
            "{listed}"
        );
        assert_eq!(settings.get("core.workers").unwrap(), json!(2), "untouched");
        for method in ["settings.dump", "settings.plugins"] {
            let err = call(&fx, method, json!({})).expect_err("not granted");
            assert!(err.contains("settings_cross"), "{err}");
        }
        // Its own data directory, in its plugin directory, owner-only, the same each time.
        let dir = call(&fx, "settings.dataDir", json!({})).expect("core")["dir"].clone();
        let dir = std::path::PathBuf::from(dir.as_str().expect("a path"));
        assert!(
            dir.ends_with("plugins/conformance/data"),
            "{}",
            dir.display()
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir)
            .expect("created")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        assert_eq!(
            call(&fx, "settings.dataDir", json!({})).expect("again")["dir"],
            dir.to_str().expect("utf-8")
        );
        host.shutdown();
    });
}

#[test]
fn settings_cross_reaches_core_and_other_plugins_keys() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let (host, settings) = start(&fx, r#"["settings_cross"]"#);
        settings.set("core.workers", json!(2)).unwrap();
        assert_eq!(
            call(&fx, "settings.getCore", json!({"key": "workers"})).unwrap()["value"],
            2
        );
        call(
            &fx,
            "settings.setPlugin",
            json!({"plugin": "files", "key": "roots", "value": ["/srv"]}),
        )
        .expect("cross set");
        assert_eq!(settings.get("plugin.files.roots").unwrap(), json!(["/srv"]));
        // Definitions stay their owner's, even with settings_cross.
        let def = json!({"key": "core.evil", "kind": "bool", "default": true, "description": "x"});
        let err =
            call(&fx, "settings.registerDef", json!({"def": def})).expect_err("own defs only");
        assert!(err.contains("may not access"), "{err}");
        // Every namespace, secrets hidden; and the plugins that have settings.
        let secret = hearth_settings::SettingDef::new(
            "plugin.mail.password",
            SettingKind::String,
            json!(""),
            "The mail password",
        )
        .secret();
        settings.define(secret).unwrap();
        settings
            .set("plugin.mail.password", json!("hunter2"))
            .unwrap();
        let dump = call(&fx, "settings.dump", json!({})).expect("dump");
        let keys: Vec<&str> = dump["settings"]
            .as_array()
            .expect("a list")
            .iter()
            .filter_map(|s| s["key"].as_str())
            .collect();
        for key in ["core.workers", "plugin.files.roots", "plugin.mail.password"] {
            assert!(keys.contains(&key), "{key} in {keys:?}");
        }
        assert!(!dump.to_string().contains("hunter2"), "{dump}");
        let plugins = call(&fx, "settings.plugins", json!({})).expect("plugins");
        assert_eq!(plugins, json!({"plugins": ["files", "mail"]}));
        host.shutdown();
    });
}
