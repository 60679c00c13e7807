//! The tool steps (SPEC §3.5 serial path, §3.6 parallel batch). One assistant message carries
//! the whole batch; tool messages follow in index order, whatever order the tools finished in.

use super::stage::cancel_view;
use super::texts;
use super::{Current, Step, Then, TurnEngine, Wait};
use hearth_ipc::EventKind;
use hearth_llm::provider::Message;
use hearth_memory::ToolOutput;
use hearth_stages::{Cancel, Stage, StageContext, ToolResult};
use serde_json::{Value, json};
use std::time::Instant;

impl TurnEngine {
    /// Parallel batch: before_toolcall for each tool in order (one step each), then every
    /// permitted tool runs at once.
    pub(super) fn tool_batch(&mut self, cur: &mut Current, now: Instant) {
        ensure_batch_assistant(cur);
        let index = cur.frame.tool_idx;
        if index < cur.frame.batch.len() {
            cur.frame
                .tools_used
                .push(cur.frame.batch[index].name.clone());
            self.before_toolcall(cur, index, Then::BatchBefore { index });
            return;
        }
        let mut pending = Vec::new();
        for index in 0..cur.frame.batch.len() {
            if cur.frame.batch_denied[index].is_none()
                && let Some(call) = self.spawn_tool(cur, index, now)
            {
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
        self.before_toolcall(cur, index, Then::SerialBefore { index });
    }

    pub(super) fn tool_exec(&mut self, cur: &mut Current, now: Instant) {
        let index = cur.frame.tool_idx;
        cur.wait = match self.spawn_tool(cur, index, now) {
            Some(call) => Wait::Tools(vec![(call, index, now + self.cfg.tool_timeout)]),
            None => Wait::Ready,
        };
        cur.frame.step = Step::ToolAfter;
    }

    /// after_toolcall and the tool message: for the current tool (serial) or the next tool of
    /// the batch in index order (parallel, one step each).
    pub(super) fn tool_after(&mut self, cur: &mut Current) {
        let index = cur.frame.tool_idx;
        if cur.frame.parallel && index >= cur.frame.batch.len() {
            cur.frame.step = Step::TurnEnd;
            return;
        }
        self.deliver_tool_message(cur, index);
    }

    /// Runs before_toolcall on the tool's own context; the task goes on at `then`.
    fn before_toolcall(&mut self, cur: &mut Current, index: usize, then: Then) {
        let ctx = std::mem::take(&mut cur.frame.batch_ctxs[index]);
        self.run_stage(cur, Stage::BeforeToolcall, ctx, then);
    }

    /// Records what before_toolcall decided for tool `index`. Returns false when a plugin denied it.
    pub(super) fn after_before_toolcall(
        &mut self,
        cur: &mut Current,
        index: usize,
        ctx: StageContext,
        denied: bool,
    ) -> bool {
        if denied {
            let name = &cur.frame.batch[index].name;
            let text = ctx
                .response
                .clone()
                .filter(|t| !t.trim().is_empty())
                .unwrap_or_else(|| texts::tool_denied(cur.frame.lang, name));
            cur.frame.batch_denied[index] = Some(text);
        } else if let Some(call) = ctx.tool_calls.first() {
            // Plugins may rewrite the arguments.
            cur.frame.batch[index].arguments = call.arguments.clone();
        }
        cur.frame.batch_ctxs[index] = ctx;
        !denied
    }

    /// Starts tool `index` on the pool. A cancellable tool sees the task's stop; any other
    /// runs to its end (the engine stops waiting for it, but the tool is not told). When the
    /// pool refuses the call its error is the tool's result at once and nothing is waited for.
    fn spawn_tool(&mut self, cur: &mut Current, index: usize, now: Instant) -> Option<u64> {
        let call = self.next_call_id();
        let tool = &cur.frame.batch[index];
        let env = self.pool.env();
        let cancellable = env.tools.inspect(&tool.name, |t| t.cancellable()) == Some(true);
        let cancel = if cancellable {
            cancel_view(&cur.cancel)
        } else {
            Cancel::never()
        };
        let deadline = now + self.cfg.tool_timeout;
        let ctx = Self::call_context(
            cur,
            cancel,
            deadline.saturating_duration_since(Instant::now()),
        );
        match self
            .pool
            .spawn(call, tool.name.clone(), tool.arguments.clone(), ctx)
        {
            Ok(()) => Some(call),
            Err(e) => {
                cur.frame.batch_results[index] =
                    Some(super::ToolOutcome::failed(format!("error: {e}")));
                None
            }
        }
    }

    /// Writes the tool message for a denied tool `index`.
    pub(super) fn deliver_denial(&mut self, cur: &mut Current, index: usize) {
        ensure_batch_assistant(cur);
        let frame = &mut cur.frame;
        let call = &frame.batch[index];
        let denial = frame.batch_denied[index].clone().unwrap_or_default();
        frame
            .msgs
            .push(Message::tool(call.id.clone(), denial.clone()));
        self.events.publish(
            EventKind::ToolCall,
            &json!({"tool": call.name, "plugin": frame.batch_plugins[index], "args": call.arguments, "result": denial, "status": "denied", "channel": frame.output_channel}),
        );
    }

    /// Writes the tool message for `index`: the denial text, or the result after after_toolcall.
    fn deliver_tool_message(&mut self, cur: &mut Current, index: usize) {
        if cur.frame.batch_denied[index].is_some() {
            self.deliver_denial(cur, index);
            self.tool_delivered(cur);
            return;
        }
        ensure_batch_assistant(cur);
        let frame = &mut cur.frame;
        let call = &frame.batch[index];
        let plugin = frame.batch_plugins[index].clone();
        let outcome = outcome_of(frame, index);
        let mut ctx = std::mem::take(&mut frame.batch_ctxs[index]);
        ctx.tool_results = vec![ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            plugin,
            success: outcome.success,
            result: outcome.raw,
        }];
        self.run_stage(cur, Stage::AfterToolcall, ctx, Then::AfterTool { index });
    }

    /// What follows after_toolcall for tool `index`: its message, with a plugin's replacement.
    pub(super) fn after_after_toolcall(
        &mut self,
        cur: &mut Current,
        index: usize,
        ctx: StageContext,
    ) {
        let frame = &mut cur.frame;
        let call = frame.batch[index].clone();
        let plugin = frame.batch_plugins[index].clone();
        let outcome = outcome_of(frame, index);
        frame.batch_results[index] = None;
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
        if !outcome.media.is_empty() {
            frame.tool_media.push((call.name.clone(), outcome.media));
        }
        self.events.publish(
            EventKind::ToolCall,
            &json!({"tool": call.name, "plugin": plugin, "args": call.arguments, "result": text, "status": "ok", "channel": frame.output_channel}),
        );
        self.tool_delivered(cur);
        self.tool_memory_pass(cur, &call.name, &text);
    }

    /// One tool message is written: on to the next tool (serial: its before_toolcall).
    fn tool_delivered(&mut self, cur: &mut Current) {
        cur.frame.tool_idx += 1;
        if !cur.frame.parallel {
            cur.frame.step = Step::ToolBegin;
        }
    }
}

/// The result of tool `index` of the batch (an error text when none came back).
fn outcome_of(frame: &super::TaskFrame, index: usize) -> super::ToolOutcome {
    frame.batch_results[index]
        .clone()
        .unwrap_or_else(|| super::ToolOutcome::failed("error: no result".into()))
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
