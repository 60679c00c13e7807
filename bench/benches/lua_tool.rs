//! A Lua plugin's tool call beside an in-process Rust tool doing the same work, in the same
//! run: `ToolRegistry::execute` → the plugin's thread → the sandboxed handler (arguments and
//! result converted between JSON and Lua, the call budget armed and disarmed) → the result.
//! The baseline is the registry calling a Rust closure that builds the same answer.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use hearth_bench::{Samples, report, timed};
use hearth_lua_plugins::{LuaPlugin, LuaPluginConfig};
use hearth_plugin_host::session::Tables;
use hearth_plugin_host::{InProcessHost, NoKernel};
use hearth_stages::{CallContext, ToolDef, ToolRegistry, tool_fn};
use serde_json::{Value, json};

const SCRIPT: &str = r#"
sdk.tool{
  name = "greet_lua",
  description = "Greets.",
  handler = function(args) return { greeting = "hello " .. args.name, n = args.n + 1 } end,
}
"#;

fn run(tools: &ToolRegistry, tool: &str, rounds: u64, samples: &mut Vec<Duration>) {
    let call = CallContext::kernel(Duration::from_secs(10));
    let args = json!({"name": "hearth", "n": 41});
    timed(rounds, samples, || {
        let got = tools.execute(&call, tool, &args);
        std::hint::black_box(got.expect("tool call"));
    });
}

fn main() -> ExitCode {
    let full = std::env::args().any(|arg| arg == "--bench");
    let (batches, rounds) = if full { (10, 2_000) } else { (2, 100) };
    let dir = std::env::temp_dir().join(format!("hearth-lua-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let entry = dir.join("main.lua");
    std::fs::write(&entry, SCRIPT).expect("script");
    let host = InProcessHost {
        tables: Tables::default(),
        port: Arc::new(NoKernel),
        settings: None,
    };
    let tools = Arc::clone(&host.tables.tools);
    let plugin = LuaPlugin::start(LuaPluginConfig::new("greet", &entry), &host).expect("starts");
    let rust = ToolDef {
        name: "greet_rust".into(),
        description: "Greets.".into(),
        ..ToolDef::default()
    };
    tools
        .register(
            rust,
            tool_fn(|args: &Value| {
                let name = args["name"].as_str().unwrap_or_default();
                let n = args["n"].as_i64().unwrap_or_default();
                Ok(json!({"greeting": format!("hello {name}"), "n": n + 1}))
            }),
        )
        .expect("registers");
    let (mut scratch, mut lua, mut native) = (Vec::new(), Vec::new(), Vec::new());
    run(&tools, "greet_lua", rounds / 4, &mut scratch);
    run(&tools, "greet_rust", rounds / 4, &mut scratch);
    for _ in 0..batches {
        run(&tools, "greet_lua", rounds, &mut lua);
        run(&tools, "greet_rust", rounds, &mut native);
    }
    report(
        "Lua plugin tool call (registry → plugin thread → sandboxed handler → result)",
        &Samples::new(lua),
        "in-process Rust tool with the same answer",
        &Samples::new(native),
        None,
    );
    drop(plugin);
    let _ = std::fs::remove_dir_all(dir);
    ExitCode::SUCCESS
}
