//! Lua script plugins with real scripts on their own threads: tools in the registry with
//! their owner, the call context, hostile scripts (loops, memory and string bombs, escape
//! attempts) stopped per call, the crash policy, and reload on change.

use hearth_lua_plugins::{LuaPlugin, LuaPluginConfig, LuaPluginError};
use hearth_plugin_host::RestartPolicy;
use hearth_rpc::Grants;
use hearth_stages::{CallContext, HandlerError, ToolRegistry, ToolSource};
use hearth_testkit::{fresh_dir, within};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod support;

use support::{WATCHDOG, failed, host, limits, script, start_in};

fn start(name: &str, entry: &Path, policy: RestartPolicy) -> (Arc<ToolRegistry>, LuaPlugin) {
    let host = host();
    let plugin = start_in(&host, name, entry, policy, Grants::unrestricted());
    (Arc::clone(&host.tables.tools), plugin)
}

fn call(registry: &ToolRegistry, tool: &str, args: Value) -> Result<Value, HandlerError> {
    registry.execute(&CallContext::kernel(Duration::from_secs(10)), tool, &args)
}

#[test]
fn a_scripts_tools_are_registered_as_its_own_and_keep_state_between_calls() {
    within(WATCHDOG, || {
        let (registry, plugin) = start("dice", &script("dice.lua"), RestartPolicy::default());
        let entries = registry.entries();
        assert_eq!(entries.len(), 2, "{entries:?}");
        assert!(entries.iter().all(|e| e.owner == "lua:dice"), "{entries:?}");
        let tool = registry.get("dice_roll").expect("registered");
        assert_eq!(tool.owner.source, ToolSource::Lua);
        assert_eq!(
            tool.def.description,
            "Roll a die with the given number of sides."
        );
        assert_eq!(
            tool.def.parameters["properties"]["sides"]["type"],
            "integer"
        );
        let first = call(&registry, "dice_roll", json!({"sides": 6})).expect("rolls");
        let second = call(&registry, "dice_roll", json!({"sides": 6})).expect("rolls");
        assert_eq!(first["rolls"], 1);
        assert_eq!(second["rolls"], 2);
        assert_eq!(first["trust"], "kernel");
        let echoed = call(&registry, "dice_echo", json!({"a": [1, 2], "b": "x"})).expect("echo");
        assert_eq!(echoed, json!({"a": [1, 2], "b": "x"}));
        drop(plugin);
        assert!(registry.is_empty(), "dropping the plugin removes its tools");
    });
}

#[test]
fn hostile_scripts_fail_the_call_clearly_and_the_next_call_works() {
    within(WATCHDOG, || {
        // Each failure counts as a crash: room for all of them here.
        let lenient = RestartPolicy {
            max_crashes: 100,
            ..RestartPolicy::default()
        };
        let (registry, _plugin) = start("hostile", &script("hostile.lua"), lenient);
        let started = Instant::now();
        let spin = failed(call(&registry, "spin", json!({})));
        assert!(spin.contains("lua plugin hostile tool spin"), "{spin}");
        assert!(
            spin.contains("instruction budget") || spin.contains("time limit"),
            "{spin}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let caught = failed(call(&registry, "spin_caught", json!({})));
        assert!(
            caught.contains("budget") || caught.contains("time limit"),
            "{caught}"
        );
        assert_eq!(
            call(&registry, "fine", json!({})).expect("fine"),
            "still here"
        );
        let hog = failed(call(&registry, "hog", json!({})));
        assert!(hog.contains("memory"), "{hog}");
        let rep = failed(call(&registry, "rep_bomb", json!({})));
        assert!(rep.contains("memory") || rep.contains("too large"), "{rep}");
        let open = failed(call(&registry, "open_file", json!({})));
        assert!(open.contains("io"), "{open}");
        let reach = call(&registry, "reach", json!({})).expect("reach answers");
        assert_eq!(reach["found"], json!({}), "escape hatches: {reach}");
        assert_eq!(reach["text_load"], 2);
    });
}

#[test]
fn a_script_that_keeps_failing_is_stopped_by_the_crash_policy() {
    within(WATCHDOG, || {
        let policy = RestartPolicy {
            max_crashes: 3,
            ..RestartPolicy::scaled(1000)
        };
        let policy = RestartPolicy {
            window: Duration::from_secs(60),
            ..policy
        };
        let (registry, plugin) = start("hostile", &script("hostile.lua"), policy);
        for _ in 0..2 {
            failed(call(&registry, "open_file", json!({})));
            assert!(plugin.is_running());
        }
        failed(call(&registry, "open_file", json!({})));
        let gone = Instant::now();
        while plugin.is_running() && gone.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!plugin.is_running(), "stopped after three failures");
        assert!(!registry.contains("fine"), "its tools left the registry");
    });
}

#[test]
fn a_changed_file_is_reloaded_and_a_broken_one_keeps_the_old_version() {
    within(WATCHDOG, || {
        let dir = fresh_dir("lua-reload");
        let entry = dir.join("main.lua");
        let version = |n: u32| {
            format!(
                "sdk.tool{{ name = \"ver\", description = \"v\", handler = function() return {n} end }}\n"
            )
        };
        std::fs::write(&entry, version(1)).expect("write");
        let (registry, _plugin) = start("reload", &entry, RestartPolicy::default());
        assert_eq!(call(&registry, "ver", json!({})).expect("v1"), 1);
        // A new mtime even on a coarse clock.
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(
            &entry,
            format!(
                "{}sdk.tool{{ name = \"ver_two\", handler = function() return 'x' end }}\n",
                version(2)
            ),
        )
        .expect("write");
        let until = Instant::now() + Duration::from_secs(5);
        while call(&registry, "ver", json!({})).ok() != Some(json!(2)) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(call(&registry, "ver", json!({})).expect("v2"), 2);
        assert!(registry.contains("ver_two"));
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&entry, "sdk.tool{ name = ").expect("write");
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(call(&registry, "ver", json!({})).expect("still v2"), 2);
        let _ = std::fs::remove_dir_all(dir);
    });
}

#[test]
fn a_script_that_does_not_load_is_an_error_naming_the_file() {
    within(WATCHDOG, || {
        let dir = fresh_dir("lua-broken");
        let entry = dir.join("main.lua");
        let host = host();
        let registry = Arc::clone(&host.tables.tools);
        for (source, want) in [
            ("this is not lua", "syntax error"),
            ("while true do end", "budget"),
            ("sdk.tool{ name = 'x' }", "handler"),
            ("os.exit(1)", "os"),
        ] {
            std::fs::write(&entry, source).expect("write");
            let cfg = LuaPluginConfig {
                limits: limits(),
                ..LuaPluginConfig::new("broken", &entry)
            };
            match LuaPlugin::start(cfg, &host) {
                Err(e @ LuaPluginError::Load { .. }) => {
                    let text = e.to_string();
                    assert!(
                        text.contains("main.lua")
                            && (text.contains(want) || text.contains("time limit")),
                        "{source}: {text}"
                    );
                }
                other => panic!("{source}: {other:?}"),
            }
        }
        assert!(registry.is_empty());
        let _ = std::fs::remove_dir_all(dir);
    });
}
