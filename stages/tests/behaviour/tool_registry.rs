//! The plugin tool registry.

use hearth_stages::{HandlerError, StagesError, ToolDef, ToolRegistry, tool_fn};
use serde_json::{Value, json};

use crate::{answer, call, def};

#[test]
fn a_duplicate_name_is_refused_and_the_first_tool_stays() {
    let reg = ToolRegistry::new();
    reg.register(def("weather_now"), answer(json!("first")))
        .expect("first registration");
    let err = reg
        .register(
            ToolDef {
                plugin: "other".into(),
                ..def("weather_now")
            },
            answer(json!("second")),
        )
        .expect_err("duplicate");
    assert_eq!(
        err,
        StagesError::DuplicateTool {
            name: "weather_now".into(),
            existing: "plugin weather".into(),
            incoming: "plugin other".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "tool weather_now is already offered by plugin weather; plugin other cannot offer it too"
    );
    assert_eq!(
        reg.execute(&call(), "weather_now", &json!({})),
        Ok(json!("first"))
    );
    assert_eq!(reg.plugin_of("weather_now").as_deref(), Some("weather"));
    assert_eq!(reg.len(), 1);
}

#[test]
fn the_plugin_is_inferred_from_the_name_only_when_empty() {
    let reg = ToolRegistry::new();
    reg.register(def("weather_now"), answer(json!(1)))
        .expect("ok");
    reg.register(def("ping"), answer(json!(1))).expect("ok");
    reg.register(def("_hidden"), answer(json!(1))).expect("ok");
    reg.register(def("a_b_c"), answer(json!(1))).expect("ok");
    reg.register(
        ToolDef {
            plugin: "explicit".into(),
            ..def("x_tool")
        },
        answer(json!(1)),
    )
    .expect("ok");
    assert_eq!(reg.plugin_of("weather_now").as_deref(), Some("weather"));
    assert_eq!(reg.plugin_of("ping").as_deref(), Some(""));
    assert_eq!(reg.plugin_of("_hidden").as_deref(), Some(""));
    assert_eq!(reg.plugin_of("a_b_c").as_deref(), Some("a"));
    assert_eq!(reg.plugin_of("x_tool").as_deref(), Some("explicit"));
    assert_eq!(reg.plugin_of("missing"), None);
    assert_eq!(
        reg.get("weather_now").map(|t| t.def.plugin),
        Some("weather".to_owned())
    );
}

#[test]
fn a_name_upstream_apis_would_reject_is_refused() {
    let reg = ToolRegistry::new();
    for bad in ["", "has space", "dotted.name", &"x".repeat(65)] {
        assert!(
            matches!(
                reg.register(def(bad), answer(json!(1))),
                Err(StagesError::InvalidToolName { .. })
            ),
            "{bad:?}"
        );
    }
    assert!(reg.is_empty());
}

#[test]
fn defs_keep_registration_order_and_unregister_plugin_removes_only_its_tools() {
    let reg = ToolRegistry::new();
    for name in ["b_one", "a_one", "b_two", "c_one", "b_three"] {
        reg.register(def(name), answer(json!(name))).expect("ok");
    }
    let names = |reg: &ToolRegistry| reg.defs().into_iter().map(|d| d.name).collect::<Vec<_>>();
    assert_eq!(names(&reg), ["b_one", "a_one", "b_two", "c_one", "b_three"]);
    assert_eq!(reg.unregister_plugin("b"), 3);
    assert_eq!(reg.unregister_plugin("b"), 0);
    assert_eq!(names(&reg), ["a_one", "c_one"]);
    assert!(reg.get("b_two").is_none());
    // The name is free again.
    reg.register(def("b_two"), answer(json!(2)))
        .expect("re-register");
    assert_eq!(names(&reg), ["a_one", "c_one", "b_two"]);
    assert!(reg.unregister("a_one"));
    assert!(!reg.unregister("a_one"));
    assert_eq!(names(&reg), ["c_one", "b_two"]);
}

#[test]
fn execute_passes_arguments_and_reports_failures_in_the_original_words() {
    let reg = ToolRegistry::new();
    reg.register(
        def("echo_args"),
        tool_fn(|args: &Value| Ok(args["x"].clone())),
    )
    .expect("ok");
    reg.register(
        def("fail_now"),
        tool_fn(|_: &Value| Err("no network".to_owned())),
    )
    .expect("ok");
    reg.register(
        def("boom_now"),
        tool_fn(|_: &Value| -> Result<Value, String> { panic!("kaboom") }),
    )
    .expect("ok");
    assert_eq!(
        reg.execute(&call(), "echo_args", &json!({"x": [1, 2]})),
        Ok(json!([1, 2]))
    );
    assert_eq!(
        reg.execute(&call(), "fail_now", &json!({})),
        Err(HandlerError::Failed("no network".to_owned()))
    );
    assert_eq!(
        reg.execute(&call(), "boom_now", &json!({})),
        Err(HandlerError::Failed(
            "tool boom_now handler panic: kaboom".to_owned()
        ))
    );
    assert_eq!(
        reg.execute(&call(), "nope", &json!({})),
        Err(HandlerError::Unavailable(
            "tool nope not found in any plugin".to_owned()
        ))
    );
    // The registry is still usable after a tool panicked.
    assert_eq!(
        reg.execute(&call(), "echo_args", &json!({"x": 3})),
        Ok(json!(3))
    );
}
