//! The smallest useful plugin: one tool that repeats its argument.
//!
//! Build with `cargo build -p hearth-plugin --example echo`; the kernel runs the binary as a
//! child process and talks to it over stdin/stdout (`ipc/PROTOCOL.md`).

use std::process::ExitCode;

use hearth_plugin::{CallContext, Plugin, Registrar, ToolDef, ToolError, Value, json};

struct Echo;

impl Plugin for Echo {
    fn name(&self) -> &str {
        "echo"
    }

    fn start(&mut self, reg: &mut Registrar<'_>) -> Result<(), ToolError> {
        let def = ToolDef::new("echo", "Repeats the text it is given.").parameters(json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        }));
        reg.tool(def, |ctx: &CallContext, args: Value| {
            let text = args["text"]
                .as_str()
                .ok_or_else(|| ToolError::invalid_arguments("text must be a string"))?;
            Ok(json!({"text": text, "task": ctx.task_id()}))
        })?;
        reg.on_stop(|| eprintln!("echo: stopped"));
        Ok(())
    }
}

fn main() -> ExitCode {
    hearth_plugin::run(Echo)
}
