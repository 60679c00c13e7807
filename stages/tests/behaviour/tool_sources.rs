//! One registry for every source: owners, capabilities, collisions across sources, and the
//! policy that keeps tools from the model.

use std::collections::BTreeSet;

use hearth_stages::{
    HandlerError, StagesError, ToolDef, ToolHandler, ToolOwner, ToolPolicy, ToolRegistry,
    ToolSource,
};
use serde_json::json;

use crate::{answer, call, def};

fn mcp(server: &str) -> ToolOwner {
    ToolOwner::new(ToolSource::Mcp, server)
}

fn offered(reg: &ToolRegistry) -> Vec<String> {
    reg.defs().into_iter().map(|d| d.name).collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn a_collision_across_sources_names_both_owners() {
    let reg = ToolRegistry::new();
    reg.register_owned(
        def("fs_read"),
        ToolOwner::builtin(),
        "tool",
        answer(json!(1)),
    )
    .expect("built-in");
    let err = reg
        .register_owned(def("fs_read"), mcp("fs"), "mcp.read", answer(json!(2)))
        .expect_err("taken");
    assert_eq!(
        err,
        StagesError::DuplicateTool {
            name: "fs_read".into(),
            existing: "the built-in tools".into(),
            incoming: "mcp server fs".into(),
        }
    );
    assert_eq!(reg.execute(&call(), "fs_read", &json!({})), Ok(json!(1)));
    let err = reg
        .register_owned(def("bad.name"), mcp("fs"), "mcp.read", answer(json!(2)))
        .expect_err("invalid");
    assert!(matches!(err, StagesError::InvalidToolName { .. }));
}

#[test]
fn each_tool_carries_its_owner_and_capability() {
    let reg = ToolRegistry::new();
    reg.register_owned(def("fs_read"), mcp("fs"), "mcp.read", answer(json!(1)))
        .expect("ok");
    reg.register(def("weather_now"), answer(json!(1)))
        .expect("ok");
    let entries = reg.entries();
    assert_eq!(entries[0].owner, "mcp:fs");
    assert_eq!(entries[0].capability, "mcp.read");
    assert_eq!(entries[1].owner, "plugin:weather");
    assert_eq!(entries[1].capability, "tool");
    let tool = reg.get("fs_read").expect("there");
    assert_eq!(tool.owner, mcp("fs"));
    assert_eq!(
        tool.def.plugin, "fs",
        "the owner's name fills an empty plugin"
    );
}

#[test]
fn a_disabled_or_denied_tool_is_never_offered_nor_run() {
    let reg = ToolRegistry::new();
    reg.register_owned(def("fs_read"), mcp("fs"), "mcp.read", answer(json!(1)))
        .expect("ok");
    reg.register_owned(def("fs_write"), mcp("fs"), "mcp.write", answer(json!(2)))
        .expect("ok");
    reg.register_owned(def("web_get"), mcp("web"), "mcp.read", answer(json!(3)))
        .expect("ok");
    reg.register_owned(
        def("time_now"),
        ToolOwner::builtin(),
        "tool",
        answer(json!(4)),
    )
    .expect("ok");
    assert_eq!(
        offered(&reg),
        ["fs_read", "fs_write", "web_get", "time_now"]
    );

    reg.set_policy(ToolPolicy {
        denied: set(&["mcp.write"]),
        ..ToolPolicy::default()
    });
    assert_eq!(offered(&reg), ["fs_read", "web_get", "time_now"]);
    let err = reg.execute(&call(), "fs_write", &json!({})).unwrap_err();
    assert!(
        matches!(&err, HandlerError::Denied(m) if m.contains("mcp.write")),
        "{err}"
    );

    reg.set_policy(ToolPolicy {
        disabled: set(&["mcp:web", "time_now"]),
        ..ToolPolicy::default()
    });
    assert_eq!(offered(&reg), ["fs_read", "fs_write"]);
    assert!(matches!(
        reg.execute(&call(), "web_get", &json!({})),
        Err(HandlerError::Denied(m)) if m.contains("mcp server web")
    ));
    assert!(matches!(
        reg.execute(&call(), "time_now", &json!({})),
        Err(HandlerError::Denied(_))
    ));
    let withheld: Vec<_> = reg
        .entries()
        .into_iter()
        .filter(|e| e.withheld.is_some())
        .collect();
    assert_eq!(withheld.len(), 2);

    reg.set_policy(ToolPolicy::default());
    assert_eq!(reg.execute(&call(), "web_get", &json!({})), Ok(json!(3)));
}

#[test]
fn unregistering_an_owner_leaves_a_plugin_of_the_same_name() {
    let reg = ToolRegistry::new();
    reg.register_owned(def("fs_read"), mcp("fs"), "mcp.read", answer(json!(1)))
        .expect("ok");
    reg.register(def("fs_list"), answer(json!(1)))
        .expect("plugin fs");
    assert_eq!(reg.unregister_plugin("fs"), 1, "only the plugin's tool");
    assert!(reg.contains("fs_read"));
    assert_eq!(reg.unregister_owner(&mcp("fs")), 1);
    assert!(reg.is_empty());
}

fn batch(names: &[&str]) -> Vec<(ToolDef, String, std::sync::Arc<dyn ToolHandler>)> {
    names
        .iter()
        .map(|n| {
            let handler: std::sync::Arc<dyn ToolHandler> = std::sync::Arc::new(answer(json!(n)));
            (def(n), "mcp.read".to_owned(), handler)
        })
        .collect()
}

#[test]
fn replacing_an_owners_tools_keeps_others_and_reports_collisions() {
    let reg = ToolRegistry::new();
    reg.register(def("web_get"), answer(json!("plugin")))
        .expect("plugin web");
    assert!(
        reg.replace_owned(&mcp("fs"), batch(&["fs_a", "fs_b"]))
            .is_empty()
    );
    let refused = reg.replace_owned(&mcp("fs"), batch(&["fs_b", "fs_c", "web_get"]));
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0].to_string().contains("plugin web"),
        "{}",
        refused[0]
    );
    assert_eq!(offered(&reg), ["web_get", "fs_b", "fs_c"]);
    assert_eq!(
        reg.execute(&call(), "web_get", &json!({})),
        Ok(json!("plugin"))
    );
}

/// A reader never sees an owner's tools half replaced.
#[test]
fn a_replacement_is_seen_whole_or_not_at_all() {
    hearth_testkit::within(std::time::Duration::from_secs(30), || {
        let reg = std::sync::Arc::new(ToolRegistry::new());
        let names: Vec<String> = (0..8).map(|i| format!("fs_t{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        assert!(reg.replace_owned(&mcp("fs"), batch(&refs)).is_empty());
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (reg, stop, names) = (reg.clone(), stop.clone(), names.clone());
            std::thread::spawn(move || {
                let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    assert!(reg.replace_owned(&mcp("fs"), batch(&refs)).is_empty());
                }
            })
        };
        for _ in 0..20_000 {
            assert_eq!(reg.defs().len(), 8);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writer.join().expect("writer");
    });
}
