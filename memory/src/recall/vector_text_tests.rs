//! What text of an event is embedded and searched is decided in one place, so the channels' and
//! tools' cleaners and no-memory flags hold for every index alike.

use std::borrow::Cow;

use super::*;
use crate::{ContextEvent, ToolOutput};

struct Rules;

impl VectorTextRules for Rules {
    fn clean_channel<'t>(&self, source: &str, text: Cow<'t, str>) -> Cow<'t, str> {
        if source == "web" {
            Cow::Owned(text.replace("<b>", "").replace("</b>", ""))
        } else {
            text
        }
    }

    fn channel_no_memory(&self, source: &str) -> bool {
        source == "secret"
    }

    fn clean_tool<'t>(&self, tool: &str, output: &'t str) -> Cow<'t, str> {
        if tool == "search" {
            Cow::Owned(output.to_uppercase())
        } else {
            Cow::Borrowed(output)
        }
    }

    fn tool_no_memory(&self, tool: &str) -> bool {
        tool == "clock"
    }
}

#[test]
fn text_for_vector_chooses_the_spec_base_text() {
    let agent = ContextEvent::new(1, AGENT_SOURCE, "ask").with_response("the answer");
    assert_eq!(text_for_vector(&agent, &PlainText), "the answer");
    let agent_silent = ContextEvent::new(1, AGENT_SOURCE, "ask");
    assert_eq!(text_for_vector(&agent_silent, &PlainText), "ask");
    let cold = ContextEvent::new(1, COLD_STORAGE_SOURCE, "old q").with_response("old a");
    assert_eq!(text_for_vector(&cold, &PlainText), "old q old a");
    let other = ContextEvent::new(1, "cli", "question").with_response("reply");
    assert_eq!(text_for_vector(&other, &PlainText), "question");
}

#[test]
fn text_for_vector_applies_cleaners_no_memory_and_tools() {
    let mut web = ContextEvent::new(1, "web", "  <b>hello</b>\n\n world ");
    web.tool_results = vec![
        ToolOutput {
            name: "search".into(),
            output: "found it".into(),
        },
        ToolOutput {
            name: "clock".into(),
            output: "12:00".into(),
        },
        ToolOutput {
            name: "calc".into(),
            output: "4\t2".into(),
        },
    ];
    assert_eq!(text_for_vector(&web, &Rules), "hello world FOUND IT 4 2");
    let mut secret = ContextEvent::new(1, "secret", "pin 1234");
    secret.tool_results = web.tool_results.clone();
    assert_eq!(text_for_vector(&secret, &Rules), "");
}

#[test]
fn clean_text_collapses_whitespace_and_drops_controls() {
    assert_eq!(
        clean_text("  a \t b\r\n\u{7}c\u{3000}d\u{7}e  "),
        "a b c de"
    );
    assert_eq!(clean_text(" \n "), "");
}
