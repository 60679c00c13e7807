//! Finishing a task (SPEC §3.7): the context window entry, the reply through before_output,
//! the `agent_output` event and after_output. Runs exactly once per task.

use super::texts;
use super::{Current, Terminal, Then, TurnEngine};
use crate::input::Reply;
use hearth_ipc::EventKind;
use hearth_memory::ContextEvent;
use hearth_stages::{Stage, StageContext};
use serde_json::json;

impl TurnEngine {
    pub(super) fn finish(&mut self, mut cur: Current, terminal: Terminal) {
        let id = cur.task.id;
        let record = !cur.frame.critical;
        match terminal {
            Terminal::Skipped(reason) => {
                self.skip(&mut cur.task.input, &reason);
                return self.finish_end(&mut cur);
            }
            Terminal::ShortCircuit(text) => self.emit_response(&mut cur, text, false),
            Terminal::Ok(text) => {
                let text = if cur.frame.resumed_after_restart {
                    format!("{}{text}", texts::resumed_notice(cur.frame.lang))
                } else {
                    text
                };
                if record {
                    let frame = &cur.frame;
                    let mut evt = ContextEvent::new(
                        hearth_engine::now_ms(),
                        "agent",
                        frame.clean_input.clone(),
                    )
                    .with_response(text.clone());
                    // The reply carries the turn's id too (its input words are distilled
                    // like the input's, and tagged with the same scenes).
                    evt.id.clone_from(&cur.task.input.request_id);
                    evt.tools_used.clone_from(&frame.tools_used);
                    evt.tool_results.clone_from(&frame.tool_results);
                    evt.shown = shown(frame);
                    if !frame.no_memory {
                        cur.candidate = Some(self.memory_candidate(&frame.source, &evt));
                    }
                    self.commit_event(evt);
                }
                self.emit_response(&mut cur, text, false);
            }
            Terminal::Failed(err) => {
                let text = texts::processing_error(cur.frame.lang, &err);
                tracing::warn!(task = id, "task failed: {err}");
                if record {
                    let input = cur.frame.input.clone();
                    let mut evt = ContextEvent::new(hearth_engine::now_ms(), "agent", input)
                        .with_response(text.clone());
                    evt.id.clone_from(&cur.task.input.request_id);
                    self.commit_event(evt);
                }
                self.emit_response(&mut cur, text, true);
            }
        }
        // Still waiting for before_output: the task stays current until its reply is out.
        if !cur.done {
            self.current = Some(cur);
        }
    }

    /// The `memory_candidate` event of a turn recorded as `evt` (SPEC §3.7): what a memory kept
    /// outside Hearth would store of it. Its response is the reply before before_output, as
    /// Hearth's own memory keeps it.
    fn memory_candidate(&self, source: &str, evt: &ContextEvent) -> serde_json::Value {
        json!({
            "source": source,
            "request_id": evt.id,
            "input": evt.input,
            "response": evt.response,
            "tool_results": evt.tool_results,
            "tools_used": evt.tools_used,
            "agent_id": self.events.agent_id(),
            "timestamp": evt.timestamp_ms,
        })
    }

    /// The reply is out: the task leaves the scheduler.
    fn finish_end(&mut self, cur: &mut Current) {
        if cur.frame.critical {
            self.sched.set_critical(false);
        }
        self.sched.done(cur.task.id);
        cur.done = true;
    }

    /// A skipped reply, journaled when the engine is durable (so it is not run again after a
    /// restart).
    pub(super) fn skip(&self, input: &mut crate::input::InputEvent, reason: &str) {
        let reply = Reply {
            skipped: true,
            reason: Some(reason.to_string()),
            ..Reply::default()
        };
        match &self.durable {
            Some(durable) => durable.reply(input.take_reply(), reply, Vec::new()),
            None => {
                input.send_reply(reply);
            }
        }
    }

    fn emit_response(&mut self, cur: &mut Current, text: String, error: bool) {
        let ctx = StageContext {
            final_text: text,
            ..StageContext::default()
        };
        self.run_stage(cur, Stage::BeforeOutput, ctx, Then::BeforeOutput { error });
    }

    /// What follows before_output: the reply (a handler's response replaces the text), then
    /// after_output, which nobody waits for.
    pub(super) fn emit_reply(
        &mut self,
        cur: &mut Current,
        mut ctx: StageContext,
        responded: bool,
        error: bool,
    ) {
        if responded && let Some(resp) = ctx.response.clone() {
            ctx.final_text = resp;
        }
        let channel = cur.frame.output_channel.clone();
        let frame = &cur.frame;
        let reply = Reply {
            content: ctx.final_text.clone(),
            error,
            reasoning_content: frame.last_reasoning.clone(),
            usage: frame.usage,
            recalled: frame.recalled.clone(),
            ..Reply::default()
        };
        let mut event = json!({"content": ctx.final_text, "channel": channel, "source": frame.source, "request_id": cur.task.input.request_id});
        if !frame.last_reasoning.is_empty() {
            event["reasoning_content"] = json!(frame.last_reasoning);
        }
        let mut outputs = vec![(EventKind::AgentOutput, event)];
        outputs.extend(
            cur.candidate
                .take()
                .map(|c| (EventKind::MemoryCandidate, c)),
        );
        match &self.durable {
            // Journaled first, then sent and published, on the store's thread.
            Some(durable) => durable.reply(cur.task.input.take_reply(), reply, outputs),
            None => {
                cur.task.input.send_reply(reply);
                for (kind, output) in &outputs {
                    self.events.publish(*kind, output);
                }
            }
        }
        ctx.response = None;
        self.run_stage_detached(cur, Stage::AfterOutput, ctx);
        self.finish_end(cur);
    }
}

/// What memory showed the model for `frame`'s reply: the remembered turns recalled into its
/// prompt or by its tools (`c45`), then the facts of the indexer's block (`r12`).
fn shown(frame: &super::frame::TaskFrame) -> Vec<String> {
    let entries = frame
        .recalled
        .iter()
        .map(|r| format!("{}{}", crate::recalled::ENTRY_PREFIX, r.id));
    entries
        .chain(crate::graph_service::shown_ids(&frame.memory_block))
        .collect()
}
