//! Memory declared by a tool (SPEC §3.5 ToolAfter): a tool whose declaration says
//! `context_policy: "prune"` prunes the working window, and one that says `recall_policy:
//! "auto"` recalls into the prompt, each with the tool's output as the query, through the same
//! memory pass as an input's. The recalled text reaches the model as one system message headed
//! 【记忆召回】 ("Memory recall:" for English input) after the batch's tool messages; a later
//! batch's recall replaces it instead of adding a second.
//!
//! The pass is a request like any other: the task waits for it while stops and interrupts are
//! taken. The tool message is delivered before it starts, so a task suspended while it runs
//! resumes at the next tool and only loses the recall.

use super::{Current, TurnEngine, Wait};
use crate::error::MemoryError;
use crate::lang::Lang;
use crate::memory_service::{MemoryPass, PassBudget, PassRequest};
use hearth_llm::provider::{Message, Role};
use hearth_stages::{ContextPolicy, RecallPolicy};

/// The header of a tool's recall message, in `lang` (the original's Chinese one otherwise).
pub(super) fn recall_header(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "Memory recall:",
        Lang::Zh => "【记忆召回】",
    }
}

/// The longest tool output used as a query, in bytes: a query longer than a few paragraphs
/// only costs ranking time (a file's whole text ranked word by word), and what a tool's result
/// is about shows in its opening.
pub(super) const QUERY_BYTES: usize = 2_000;

/// What continues a memory pass once it is back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AfterMemory {
    /// The input's own pass: build the prompt.
    Prepare,
    /// A tool's declared pass: keep its recall for the next request.
    Tool,
}

impl TurnEngine {
    /// Starts the memory pass tool `name` declares for its output `text`, if it declares one
    /// and the task may have it (never for a consolidation task; an interrupt recalls but
    /// does not prune, as for inputs). Returns whether the task now waits for it.
    pub(super) fn tool_memory_pass(&mut self, cur: &mut Current, name: &str, text: &str) -> bool {
        let Some(memory) = self.memory.clone() else {
            return false;
        };
        let policies =
            |t: &hearth_stages::RegisteredTool| (t.def.context_policy, t.def.recall_policy);
        let Some((context_policy, recall_policy)) = self.pool.env().tools.inspect(name, policies)
        else {
            return false;
        };
        let frame = &cur.frame;
        let prune =
            context_policy == ContextPolicy::Prune && !frame.is_interrupt && !frame.critical;
        let recall = recall_policy == RecallPolicy::Auto && !frame.critical;
        let query = &text[..text.floor_char_boundary(QUERY_BYTES)];
        if !(prune || recall) || query.trim().is_empty() {
            return false;
        }
        let budget = self.turn_budget(&super::offer::schema_text(&frame.tools));
        let call = self.next_call_id();
        memory.pass(PassRequest {
            call,
            query: query.to_owned(),
            budget: PassBudget {
                prune,
                recall,
                context_tokens: budget.context_tokens,
                memory_tokens: budget.memory_tokens,
            },
            tools: None,
            scene: None,
        });
        cur.wait = Wait::Memory {
            call,
            after: AfterMemory::Tool,
        };
        true
    }

    /// A tool's pass is back: the window it left becomes the kernel's, and what it recalled
    /// waits for the end of the batch.
    pub(super) fn tool_memory_done(
        &mut self,
        cur: &mut Current,
        result: Result<MemoryPass, MemoryError>,
    ) {
        let pass = match result {
            Ok(pass) => pass,
            // Memory is an aid, not a gate: the tool's result stands without it.
            Err(e) => {
                tracing::warn!("a tool's memory pass failed, going on without it: {e}");
                return;
            }
        };
        self.adopt_window(pass.window);
        if pass.block.is_empty() {
            return;
        }
        let frame = &mut cur.frame;
        let lines = pass
            .block
            .strip_prefix(hearth_memory::INJECT_HEADER)
            .unwrap_or(&pass.block)
            .trim_start_matches('\n');
        frame.tool_recall = format!("{}\n{lines}", recall_header(frame.lang));
        for item in pass.recalled {
            if !frame.recalled.iter().any(|r| r.id == item.id) {
                frame.recalled.push(item);
            }
        }
        // Its facts were shown to the model as much as the input's block was.
        for id in pass.facts.iter().map(ToString::to_string) {
            if !frame.shown_facts.contains(&id) {
                frame.shown_facts.push(id);
            }
        }
    }
}

/// Puts the batch's recall into the prompt: in place of an earlier batch's recall message, or
/// after the batch's tool messages (a system message among them would split the tool results
/// from the call that asked for them).
pub(super) fn place_tool_recall(frame: &mut super::TaskFrame) {
    let text = std::mem::take(&mut frame.tool_recall);
    if text.is_empty() {
        return;
    }
    let earlier = frame.msgs.iter().position(|m| {
        m.role == Role::System
            && [Lang::En, Lang::Zh]
                .iter()
                .any(|&lang| m.content.starts_with(recall_header(lang)))
    });
    match earlier {
        Some(at) => frame.msgs[at] = Message::system(text),
        None => frame.msgs.push(Message::system(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_recall_replaces_the_earlier_one_in_place() {
        let mut frame = super::super::TaskFrame::new("cli", "cli", 0);
        frame.msgs.push(Message::system("prompt"));
        frame.tool_recall = "Memory recall:\n- first".into();
        place_tool_recall(&mut frame);
        frame.msgs.push(Message::tool("call_2", "result"));
        frame.tool_recall = "【记忆召回】\n- second".into();
        place_tool_recall(&mut frame);
        let recalls: Vec<&str> = frame
            .msgs
            .iter()
            .filter(|m| m.content.contains("- "))
            .map(|m| m.content.as_str())
            .collect();
        assert_eq!(recalls, ["【记忆召回】\n- second"]);
        assert_eq!(frame.msgs[1].content, "【记忆召回】\n- second", "in place");
        assert!(frame.tool_recall.is_empty());
        place_tool_recall(&mut frame);
        assert_eq!(frame.msgs.len(), 3, "nothing new: nothing placed");
    }
}
