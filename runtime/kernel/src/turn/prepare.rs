//! Input preparation (SPEC §3.2, once per task) and the Prepare step (SPEC §3.3).

use super::texts;
use super::{Current, Step, TaskFrame, Terminal, Then, TurnEngine};
use crate::input::skip;
use hearth_ipc::EventKind;
use hearth_llm::provider::{Message, Role};
use hearth_memory::{ContextEvent, format_timeline};
use hearth_scheduler::{CRITICAL_CHANNEL, TaskClass};
use hearth_stages::{ContextMsg, Stage, StageContext};
use serde_json::{Value, json};
use std::time::Instant;

impl TurnEngine {
    pub(super) fn prepare_input(&mut self, cur: &mut Current, now: Instant) {
        let input = &cur.task.input;
        // The media it brought are stored already: one marker line each after its text.
        let media = crate::input_media::media_refs(&input.payload);
        let text = crate::input_media::with_markers(input.content(), &media);
        cur.frame.media = media
            .iter()
            .map(crate::input_media::MediaRef::part)
            .collect();
        cur.frame.lang = crate::lang::Lang::for_input(self.cfg.language, &text);
        if text.trim().is_empty() {
            cur.frame.terminal = Some(Terminal::Skipped(skip::EMPTY_INPUT.into()));
            return;
        }
        if self.is_duplicate(&input.source, &text, now) {
            cur.frame.terminal = Some(Terminal::Skipped(skip::DUPLICATE.into()));
            return;
        }
        let frame = &mut cur.frame;
        frame.is_interrupt = cur.task.class == TaskClass::Interrupt || input.flag("interrupt");
        frame.critical =
            input.output_channel == CRITICAL_CHANNEL || input.source == CRITICAL_CHANNEL;
        if frame.critical {
            self.sched.set_critical(true);
            // A consolidation task that reads its answer as data (the model distiller) offers
            // no tools: a schema is only prompt a small model may answer with instead.
            if input.str_field("tools") == Some("none") {
                frame.tool_choice = Some(Vec::new());
            }
        }
        frame.no_memory = input.flag("no_memory") || frame.is_interrupt;

        let mut ctx = StageContext {
            raw_message: text,
            user_id: input.source.clone(),
            no_memory: frame.no_memory,
            ..StageContext::default()
        };
        ctx.extra
            .insert("input_source".into(), Value::String(input.source.clone()));
        ctx.extra.insert(
            "output_channel".into(),
            Value::String(frame.output_channel.clone()),
        );
        let device = input
            .str_field("device_name")
            .or(input.str_field("device_id"));
        let note = texts::source_note(
            frame.lang,
            &input.source,
            &frame.output_channel,
            device,
            input.flag("interrupt"),
        );
        if let Some(content) = note {
            ctx.context_msgs.push(ContextMsg {
                role: "system".into(),
                content,
            });
        }
        self.run_stage(cur, Stage::OnInput, ctx, Then::OnInput);
    }

    /// What follows on_input: the answer of a handler that responded, or the input taken in.
    pub(super) fn after_on_input(&mut self, cur: &mut Current, ctx: StageContext, responded: bool) {
        let frame = &mut cur.frame;
        if responded {
            frame.terminal = Some(Terminal::ShortCircuit(
                ctx.response.clone().unwrap_or_default(),
            ));
            return;
        }
        frame.input = ctx.raw_message.clone();
        frame.clean_input = frame.input.clone();
        frame.stage_ctx = ctx;
        self.events.publish(
            EventKind::RawInput,
            &json!({"content": frame.input, "source": frame.source}),
        );
        if !frame.is_interrupt && !frame.critical {
            let mut event = ContextEvent::new(
                frame.started_at_ms,
                frame.source.clone(),
                frame.input.clone(),
            );
            // The turn's id: what the cold items distilled from this event name as their turn,
            // and what the turn's scenes are noted under.
            event.id.clone_from(&cur.task.input.request_id);
            self.commit_event(event);
        }
        frame.step = if self.memory.is_some() {
            Step::Memory
        } else {
            Step::Prepare
        };
    }

    /// Remembers `(source, text)` and reports whether it was seen inside the duplicate window.
    fn is_duplicate(&mut self, source: &str, text: &str, now: Instant) -> bool {
        let window = self.cfg.duplicate_window;
        self.recent_inputs
            .retain(|_, at| now.duration_since(*at) < window);
        let key = (source.to_string(), text.to_string());
        if self.recent_inputs.contains_key(&key) {
            return true;
        }
        self.recent_inputs.insert(key, now);
        false
    }

    pub(super) fn prepare(&mut self, cur: &mut Current) {
        let frame = &mut cur.frame;
        self.offer_tools(frame);
        frame.msgs = self.build_prefix(frame);
        frame.prefix_len = frame.msgs.len();
        let ctx = std::mem::take(&mut frame.stage_ctx);
        self.run_stage(cur, Stage::PreAction, ctx, Then::PreAction);
    }

    /// What follows pre_action: a handler's answer, a stop, or the request's messages.
    pub(super) fn after_pre_action(
        &mut self,
        cur: &mut Current,
        ctx: StageContext,
        responded: bool,
    ) {
        let frame = &mut cur.frame;
        if responded {
            frame.terminal = Some(Terminal::Ok(ctx.response.clone().unwrap_or_default()));
            frame.stage_ctx = ctx;
            return;
        }
        if self.sched.consume_cancel() {
            frame.terminal = Some(Terminal::Ok(texts::cancelled_by_stop(frame.lang).into()));
            frame.stage_ctx = ctx;
            return;
        }
        // The source note is injected at on_input, so it lands after the user message.
        for msg in ctx.context_msgs.iter().filter(|m| !m.role.is_empty()) {
            let role = match msg.role.as_str() {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                _ => Role::System,
            };
            frame.msgs.push(Message::new(role, msg.content.clone()));
        }
        frame.stage_ctx = ctx;
        frame.step = Step::Llm;
    }

    /// System prompt, timeline and the input itself: the part of the prompt rebuilt on resume,
    /// so an interrupted task sees what its interrupt committed (SPEC §2.11).
    pub(super) fn build_prefix(&self, frame: &TaskFrame) -> Vec<Message> {
        let system = &self.cfg.system_prompt;
        // The schemas are sent with every request: the budget counts them with the prompt.
        let budget = self.turn_budget(&super::offer::schema_text(&frame.tools));
        let mut msgs = vec![Message::system(system.clone())];
        // The input itself is the last message: shown again as a timeline line ("[12:00] cli:
        // hello") it is only more words for a small model to talk about.
        let events = self.context.events();
        let earlier = match events.last() {
            Some(e) if is_this_input(e, frame) => &events[..events.len() - 1],
            _ => events,
        };
        // A consolidation task works on what its input gives it, not on the conversation.
        let timeline = if frame.critical {
            String::new()
        } else {
            let zone = &self.cfg.zone;
            format_timeline(earlier, budget.context_tokens, |ms| zone.offset_at(ms))
        };
        if !timeline.is_empty() {
            msgs.push(Message::system(texts::localize_timeline(
                frame.lang, timeline,
            )));
        }
        // Recalled memory after the timeline, right before the input: it is recalled for each
        // input, so its members change from one turn to the next, and a local model's server
        // reads again everything after the first change. Placed here, a change costs the
        // block alone; right after the system prompt it cost the whole timeline every turn
        // (`hearth bench recall --prune`: prompt reused from the turn before).
        if !frame.memory_block.is_empty() {
            msgs.push(Message::system(texts::localize_memory(
                frame.lang,
                frame.memory_block.clone(),
            )));
        }
        if frame.is_interrupt {
            msgs.push(Message::system(format!(
                "{}{}",
                texts::interrupt_prefix(frame.lang),
                frame.input
            )));
        } else {
            msgs.push(Message::user(frame.input.clone()).with_media(frame.media.clone()));
        }
        msgs
    }
}

/// Whether `event` is the one the task's own input committed (it has no reply yet).
fn is_this_input(event: &ContextEvent, frame: &TaskFrame) -> bool {
    event.response.is_empty()
        && event.timestamp_ms == frame.started_at_ms
        && event.source == frame.source
        && event.input == frame.input
}
