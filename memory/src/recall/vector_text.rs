//! The text an event is vectorised and searched by (SPEC §4.5 `textForVector`): the reply for
//! the agent's own events, input and reply for entries brought back from storage, the input for
//! everything else; channel and tool cleaners applied, channels and tools marked "no memory"
//! left out, then a basic normalisation.

use std::borrow::Cow;

use crate::ContextEvent;

/// Source of the agent's own events: their reply is what they say.
pub const AGENT_SOURCE: &str = "agent";
/// Source of entries brought back from storage as events: both halves carry meaning.
pub const COLD_STORAGE_SOURCE: &str = "cold_storage";

/// The channel and tool definitions `text_for_vector` consults. Every method has the
/// "no definition" default, so [`PlainText`] is the rule set of a kernel without cleaners.
pub trait VectorTextRules {
    /// The input channel `source`'s cleaner applied to `text` (unchanged when it has none).
    fn clean_channel<'t>(&self, source: &str, text: Cow<'t, str>) -> Cow<'t, str> {
        let _ = source;
        text
    }

    /// Whether the input channel `source` is declared NoMemory: its events are never searched.
    fn channel_no_memory(&self, source: &str) -> bool {
        let _ = source;
        false
    }

    /// The tool `tool`'s cleaner applied to its output (unchanged when it has none).
    fn clean_tool<'t>(&self, tool: &str, output: &'t str) -> Cow<'t, str> {
        let _ = tool;
        Cow::Borrowed(output)
    }

    /// Whether the tool `tool` is declared NoMemory: its outputs are left out.
    fn tool_no_memory(&self, tool: &str) -> bool {
        let _ = tool;
        false
    }
}

/// No cleaners, nothing marked NoMemory.
#[derive(Clone, Copy, Debug, Default)]
pub struct PlainText;

impl VectorTextRules for PlainText {}

/// SPEC §4.5 `textForVector`. Empty when the event's channel is NoMemory or nothing is left.
pub fn text_for_vector(event: &ContextEvent, rules: &dyn VectorTextRules) -> String {
    let base: Cow<'_, str> = if event.source == AGENT_SOURCE && !event.response.is_empty() {
        Cow::Borrowed(&event.response)
    } else if event.source == COLD_STORAGE_SOURCE {
        Cow::Owned(format!("{} {}", event.input, event.response))
    } else {
        Cow::Borrowed(&event.input)
    };
    // The cleaner runs before the NoMemory check, as in the original; its result is discarded
    // then, so a cleaner's side effects (if any) are the same either way.
    let cleaned = rules.clean_channel(&event.source, base);
    if rules.channel_no_memory(&event.source) {
        return String::new();
    }
    let mut text = cleaned.into_owned();
    for tool in &event.tool_results {
        if rules.tool_no_memory(&tool.name) {
            continue;
        }
        text.push(' ');
        text.push_str(&rules.clean_tool(&tool.name, &tool.output));
    }
    clean_text(&text)
}

/// Basic normalisation before vectorising: control characters dropped, every run of whitespace
/// (line breaks included) collapsed to one space, both ends trimmed.
pub fn clean_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
        } else if !c.is_control() {
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.push(c);
        }
    }
    out
}
