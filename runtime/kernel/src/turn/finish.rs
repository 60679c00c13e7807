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
                    // A tool that declares `no_memory` (memory's own, tool_search) gave
                    // memory already, or nothing worth keeping: its output is not kept again,
                    // where recall would bring back what it showed, a forgotten fact included.
                    let tools = &self.pool.env().tools;
                    evt.tool_results = frame
                        .tool_results
                        .iter()
                        .filter(|r| tools.inspect(&r.name, |t| t.def.no_memory) != Some(true))
                        .cloned()
                        .collect();
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
/// prompt or by its tools (`c45`), the facts of the indexer's blocks there (`r12`), and the
/// facts the model fetched itself with a memory tool.
fn shown(frame: &super::frame::TaskFrame) -> Vec<String> {
    let entries = frame
        .recalled
        .iter()
        .map(|r| format!("{}{}", crate::recalled::ENTRY_PREFIX, r.id));
    let mut shown: Vec<String> = entries.chain(frame.shown_facts.iter().cloned()).collect();
    for id in fetched_facts(&frame.msgs) {
        if !shown.contains(&id) {
            shown.push(id);
        }
    }
    shown
}

/// The facts (`r12`, `e3`) the results of the memory tools that show facts gave the model, in
/// `msgs`: each result's `id` fields.
fn fetched_facts(msgs: &[hearth_llm::provider::Message]) -> Vec<String> {
    let names: std::collections::HashMap<&str, &str> = msgs
        .iter()
        .flat_map(|m| &m.tool_calls)
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect();
    let mut ids = Vec::new();
    for m in msgs
        .iter()
        .filter(|m| m.role == hearth_llm::provider::Role::Tool)
    {
        let shows_facts = names
            .get(m.tool_call_id.as_str())
            .is_some_and(|n| crate::memory_tools::SHOWS_FACTS.contains(n));
        if shows_facts && let Ok(result) = serde_json::from_str::<serde_json::Value>(&m.content) {
            fact_ids_in(&result, &mut ids);
        }
    }
    ids
}

/// Every `id` field of `value` that names a fact, depth first.
fn fact_ids_in(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(fields) => {
            for (key, v) in fields {
                match v.as_str() {
                    Some(id) if key == "id" && id.parse::<hearth_graph::FactId>().is_ok() => {
                        if !out.iter().any(|o| o == id) {
                            out.push(id.to_owned());
                        }
                    }
                    _ => fact_ids_in(v, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| fact_ids_in(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::fetched_facts;
    use hearth_llm::provider::{Message, Role, ToolCallOut};
    use serde_json::json;

    #[test]
    fn the_facts_a_memory_tool_gave_the_model_are_read_from_its_results_only() {
        let call = |id: &str, name: &str| ToolCallOut {
            id: id.into(),
            name: name.into(),
            arguments: json!({}),
        };
        let mut asked = Message::new(Role::Assistant, "");
        asked.tool_calls = vec![call("a", "memory_recall"), call("b", "order_lookup")];
        let msgs = vec![
            Message::user("where do I live?"),
            asked,
            Message::tool(
                "a",
                json!({"facts": [{"id": "r12", "object": "Porto"}, {"id": "e3"},
                                 {"id": "not-a-fact"}], "memories": "…"})
                .to_string(),
            ),
            // Another tool's result naming something `r99` is not memory's.
            Message::tool("b", json!({"id": "r99"}).to_string()),
            Message::tool("a", "not json"),
        ];
        assert_eq!(fetched_facts(&msgs), ["r12", "e3"]);
    }
}
