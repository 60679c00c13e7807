//! The tool steps (SPEC §3.5 serial path, §3.6 parallel batch). One assistant message carries
//! the whole batch; tool messages follow in index order, whatever order the tools finished in.

use super::texts;
use super::{Current, Step, TurnEngine, Wait};
use hearth_ipc::EventKind;
use hearth_llm::provider::Message;
use hearth_memory::ToolOutput;
use hearth_stages::{Stage, ToolResult};
use serde_json::{Value, json};
use std::time::Instant;

impl TurnEngine {
    /// Parallel batch: before_toolcall for each tool in order, then every permitted tool runs at once.
    pub(super) fn tool_batch(&mut self, cur: &mut Current, now: Instant) {
        ensure_batch_assistant(cur);
        let mut pending = Vec::new();
        for index in 0..cur.frame.batch.len() {
            cur.frame
                .tools_used
                .push(cur.frame.batch[index].name.clone());
            if self.before_toolcall(cur, index) {
                let call = self.spawn_tool(cur, index);
                pending.push((call, index, now + self.cfg.tool_timeout));
            }
        }
        cur.frame.tool_idx = 0;
        cur.frame.step = Step::ToolAfter;
        cur.wait = if pending.is_empty() {
            Wait::Ready
        } else {
            Wait::Tools(pending)
        };
    }

    /// Serial path: the next tool's before_toolcall, or the end of the batch.
    pub(super) fn tool_begin(&mut self, cur: &mut Current, _now: Instant) {
        let index = cur.frame.tool_idx;
        if index >= cur.frame.batch.len() {
            cur.frame.step = Step::TurnEnd;
            return;
        }
        cur.frame
            .tools_used
            .push(cur.frame.batch[index].name.clone());
        if self.before_toolcall(cur, index) {
            cur.frame.step = Step::ToolExec;
        } else {
            self.deliver_tool_message(cur, index);
            cur.frame.tool_idx += 1;
        }
    }

    pub(super) fn tool_exec(&mut self, cur: &mut Current, now: Instant) {
        let index = cur.frame.tool_idx;
        let call = self.spawn_tool(cur, index);
        cur.wait = Wait::Tools(vec![(call, index, now + self.cfg.tool_timeout)]);
        cur.frame.step = Step::ToolAfter;
    }

    /// after_toolcall and the tool message: for the current tool (serial) or every tool of the
    /// batch in index order (parallel).
    pub(super) fn tool_after(&mut self, cur: &mut Current) {
        if cur.frame.parallel {
            for index in 0..cur.frame.batch.len() {
                self.deliver_tool_message(cur, index);
            }
            cur.frame.step = Step::TurnEnd;
        } else {
            let index = cur.frame.tool_idx;
            self.deliver_tool_message(cur, index);
            cur.frame.tool_idx += 1;
            cur.frame.step = Step::ToolBegin;
        }
    }

    /// Runs before_toolcall on the tool's own context. Returns false when a plugin denied it.
    fn before_toolcall(&mut self, cur: &mut Current, index: usize) -> bool {
        let mut ctx = std::mem::take(&mut cur.frame.batch_ctxs[index]);
        let denied = self.run_stage(Stage::BeforeToolcall, &mut ctx, &cur.frame.output_channel);
        if denied {
            let name = &cur.frame.batch[index].name;
            let text = ctx
                .response
                .clone()
                .filter(|t| !t.trim().is_empty())
                .unwrap_or_else(|| texts::tool_denied(name));
            cur.frame.batch_denied[index] = Some(text);
        } else if let Some(call) = ctx.tool_calls.first() {
            // Plugins may rewrite the arguments.
            cur.frame.batch[index].arguments = call.arguments.clone();
        }
        cur.frame.batch_ctxs[index] = ctx;
        !denied
    }

    fn spawn_tool(&mut self, cur: &Current, index: usize) -> u64 {
        let call = self.next_call_id();
        let tool = &cur.frame.batch[index];
        self.pool
            .spawn(call, tool.name.clone(), tool.arguments.clone());
        call
    }

    /// Writes the tool message for `index` (denial text, or the result after after_toolcall).
    fn deliver_tool_message(&mut self, cur: &mut Current, index: usize) {
        ensure_batch_assistant(cur);
        let frame = &mut cur.frame;
        let call = frame.batch[index].clone();
        let plugin = frame.batch_plugins[index].clone();
        if let Some(denial) = frame.batch_denied[index].clone() {
            frame
                .msgs
                .push(Message::tool(call.id.clone(), denial.clone()));
            self.events.publish(
                EventKind::ToolCall,
                &json!({"tool": call.name, "plugin": plugin, "args": call.arguments, "result": denial, "status": "denied", "channel": frame.output_channel}),
            );
            return;
        }
        let outcome = frame.batch_results[index]
            .take()
            .unwrap_or(super::ToolOutcome {
                success: false,
                raw: Value::String("error: no result".into()),
            });
        let mut ctx = std::mem::take(&mut frame.batch_ctxs[index]);
        ctx.tool_results = vec![ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            plugin: plugin.clone(),
            success: outcome.success,
            result: outcome.raw.clone(),
        }];
        self.run_stage(Stage::AfterToolcall, &mut ctx, &frame.output_channel);
        // A plugin may replace the result: a string is used as is, null keeps the original,
        // anything else is rendered as JSON text.
        let replaced = ctx
            .tool_results
            .first()
            .map(|r| r.result.clone())
            .unwrap_or(Value::Null);
        let text = match (&replaced, replaced == outcome.raw) {
            (_, true) | (Value::Null, _) => render(&outcome.raw),
            (Value::String(s), false) => s.clone(),
            (other, false) => other.to_string(),
        };
        frame.batch_ctxs[index] = ctx;
        frame
            .msgs
            .push(Message::tool(call.id.clone(), text.clone()));
        frame.tool_results.push(ToolOutput {
            name: call.name.clone(),
            output: text.clone(),
        });
        self.events.publish(
            EventKind::ToolCall,
            &json!({"tool": call.name, "plugin": plugin, "args": call.arguments, "result": text, "status": "ok", "channel": frame.output_channel}),
        );
    }
}

fn render(raw: &Value) -> String {
    match raw {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The batch's single assistant message, written on first use; the LLM text rides on it once.
fn ensure_batch_assistant(cur: &mut Current) {
    let frame = &mut cur.frame;
    if frame.assistant_idx.is_some() {
        return;
    }
    let mut msg = Message::new(
        hearth_llm::provider::Role::Assistant,
        frame.last_content.clone(),
    );
    msg.reasoning_content.clone_from(&frame.last_reasoning);
    msg.tool_calls = frame.batch.clone();
    frame.assistant_idx = Some(frame.msgs.len());
    frame.msgs.push(msg);
}
