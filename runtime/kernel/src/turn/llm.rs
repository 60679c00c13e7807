//! The LLM step (SPEC §3.4): continuation placeholders, the request, and what follows an answer.

use super::texts;
use super::{Current, Step, Terminal, Then, TurnEngine, Wait};
use crate::provider_service::LlmCall;
use hearth_engine::CancelToken;
use hearth_ipc::EventKind;
use hearth_llm::provider::{ChatRequest, ChatResponse, Message, ProviderError, Role, Usage};
use hearth_stages::{Stage, StageContext, ToolCall, batch_is_parallel, is_reply_only_tool};
use serde_json::json;

impl TurnEngine {
    pub(super) fn llm_step(&mut self, cur: &mut Current) {
        let frame = &mut cur.frame;
        let max = self.cfg.max_tool_turns;
        if max > 0 && frame.turn >= max {
            let text = if frame.last_content.trim().is_empty() {
                texts::max_tool_turns(frame.lang, max)
            } else {
                frame.last_content.clone()
            };
            frame.terminal = Some(Terminal::Ok(text));
            return;
        }
        frame
            .msgs
            .retain(|m| !(m.role == Role::User && texts::is_continuation(&m.content)));
        if frame
            .msgs
            .last()
            .is_some_and(|m| matches!(m.role, Role::Assistant | Role::Tool))
        {
            let text = if frame.last_batch_reply_only {
                texts::continue_after_delivery(frame.lang)
            } else {
                texts::continue_after_tools(frame.lang)
            };
            frame.msgs.push(Message::user(text));
        }
        self.grow_tools(frame);
        let request = ChatRequest::new(frame.msgs.clone(), frame.tools.clone());
        let call = self.next_call_id();
        let cancel = CancelToken::new();
        let request_id = cur.task.input.request_id.clone();
        let channel = frame.output_channel.clone();
        let queued = self.provider.call(LlmCall {
            call,
            request,
            cancel: cancel.clone(),
            channel,
            request_id,
        });
        if let Err(full) = queued {
            let refused = ProviderError::Other(full.to_string());
            return self.on_llm_result(cur, Err(refused), String::new());
        }
        cur.wait = Wait::Llm { call, cancel };
    }

    pub(super) fn on_llm_result(
        &mut self,
        cur: &mut Current,
        result: Result<ChatResponse, ProviderError>,
        partial: String,
    ) {
        let frame = &mut cur.frame;
        match result {
            Ok(resp) => self.after_llm(cur, resp),
            Err(ProviderError::Cancelled) if frame.critical => {
                frame.terminal = Some(Terminal::Failed(texts::INTERRUPTED_BY_INPUT.into()));
            }
            Err(ProviderError::Cancelled) => {
                if self.sched.take_stop() {
                    let text = if partial.trim().is_empty() {
                        texts::stopped(frame.lang).to_string()
                    } else {
                        partial
                    };
                    frame.terminal = Some(Terminal::Ok(text));
                }
                // Otherwise a preemption cut the call: the step stays `Llm` and is sent again
                // after the safe point (Hearth does not charge this to the tool-turn budget).
            }
            Err(e) => frame.terminal = Some(Terminal::Failed(e.to_string())),
        }
    }

    fn after_llm(&mut self, cur: &mut Current, resp: ChatResponse) {
        let env = self.pool.env().clone();
        let frame = &mut cur.frame;
        let usage = (resp.usage.total > 0).then_some(resp.usage);
        let mut ctx = std::mem::take(&mut frame.stage_ctx);
        ctx.llm_text = resp.content.clone();
        ctx.reasoning_content = resp.reasoning.clone();
        ctx.token_usage.clear();
        if resp.usage.total > 0 {
            ctx.token_usage
                .insert("prompt_tokens".into(), resp.usage.prompt as i64);
            ctx.token_usage
                .insert("completion_tokens".into(), resp.usage.completion as i64);
            ctx.token_usage
                .insert("total_tokens".into(), resp.usage.total as i64);
            frame.usage = Some(resp.usage);
        }
        ctx.tool_calls = resp
            .tool_calls
            .iter()
            .map(|c| ToolCall {
                id: c.id.clone(),
                name: c.name.clone(),
                plugin: plugin_of(&env, &c.name),
                arguments: c.arguments.clone(),
            })
            .collect();
        self.run_stage(cur, Stage::PostAction, ctx, Then::PostAction { usage });
    }

    /// What follows post_action: a handler's answer, the final text, or the tool batch.
    pub(super) fn after_post_action(
        &mut self,
        cur: &mut Current,
        ctx: StageContext,
        responded: bool,
        usage: Option<Usage>,
    ) {
        let env = self.pool.env().clone();
        let frame = &mut cur.frame;
        let content = ctx.llm_text.clone();
        let calls = ctx.tool_calls.clone();
        frame.last_content.clone_from(&content);
        frame.last_reasoning.clone_from(&ctx.reasoning_content);
        let stage_ctx = ctx;
        if responded {
            frame.terminal = Some(Terminal::Ok(stage_ctx.response.clone().unwrap_or_default()));
            frame.stage_ctx = stage_ctx;
            return;
        }
        let mut chain = json!({"content": content, "reasoning": frame.last_reasoning, "phase": "intermediate", "turn": frame.turn,
            "tool_calls": calls.iter().map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments})).collect::<Vec<_>>()});
        if let Some(usage) = usage {
            chain["usage"] = json!({"prompt": usage.prompt, "completion": usage.completion, "total": usage.total});
        }
        self.events.publish(EventKind::AgentLlmChain, &chain);
        if !frame.last_reasoning.is_empty() {
            self.events.publish(
                EventKind::Reasoning,
                &json!({"content": frame.last_reasoning, "channel": frame.output_channel}),
            );
        }
        if calls.is_empty() {
            frame.terminal = Some(Terminal::Ok(content));
            frame.stage_ctx = stage_ctx;
            return;
        }
        frame.reply_only = calls.iter().all(|c| is_reply_only_tool(&c.name));
        frame.batch_ctxs = calls
            .iter()
            .map(|c| {
                let mut tool_ctx = stage_ctx.clone();
                tool_ctx.tool_calls = vec![c.clone()];
                tool_ctx.tool_results.clear();
                tool_ctx.response = None;
                tool_ctx
            })
            .collect();
        frame.batch_plugins = calls.iter().map(|c| c.plugin.clone()).collect();
        frame.batch = calls
            .into_iter()
            .map(|c| hearth_llm::provider::ToolCallOut {
                id: c.id,
                name: c.name,
                arguments: c.arguments,
            })
            .collect();
        frame.batch_denied = vec![None; frame.batch.len()];
        frame.batch_results = vec![None; frame.batch.len()];
        frame.tool_idx = 0;
        frame.assistant_idx = None;
        frame.stage_ctx = stage_ctx;
        let defs: Vec<_> = frame
            .batch
            .iter()
            .filter_map(|c| env.tools.get(&c.name).map(|t| t.def))
            .collect();
        let all_known = defs.len() == frame.batch.len();
        frame.parallel = all_known && batch_is_parallel(&defs.iter().collect::<Vec<_>>());
        frame.step = if frame.parallel {
            Step::ToolBatch
        } else {
            Step::ToolBegin
        };
    }
}

fn plugin_of(env: &crate::tool_pool::ToolEnv, name: &str) -> String {
    if hearth_stages::is_output_tool(name) {
        return "output".into();
    }
    env.tools.plugin_of(name).unwrap_or_default()
}
