//! The media a batch's tools brought, shown to the model (SPEC §3.5): one user message per
//! tool after the batch's tool messages, `[以下是 <tool> 注入的媒体内容]` ("[media from <tool>
//! follows]") with the items by reference. The original measured a model seeing images inside
//! a tool message 0 times in 3 and in a user message 3 in 3. The message is shown only to a
//! source that takes the images (`Message::media_only`); every other source reads the marker
//! lines the tool message already holds.

use super::TaskFrame;
use super::texts;
use hearth_llm::provider::Message;

/// Appends the batch's media messages to the prompt, and forgets them.
pub(super) fn place_tool_media(frame: &mut TaskFrame) {
    for (tool, parts) in std::mem::take(&mut frame.tool_media) {
        let mut message =
            Message::user(texts::tool_media_header(frame.lang, &tool)).with_media(parts);
        message.media_only = true;
        frame.msgs.push(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use hearth_llm::provider::{MediaPart, Role};

    #[test]
    fn each_tools_media_get_a_message_of_their_own_once() {
        let mut frame = TaskFrame::new("cli", "cli", 0);
        frame.lang = Lang::En;
        let part = |d: &str| MediaPart {
            digest: d.repeat(64),
            mime: "image/png".into(),
        };
        frame.tool_media = vec![
            ("screen_shot".into(), vec![part("a"), part("b")]),
            ("camera".into(), vec![part("c")]),
        ];
        place_tool_media(&mut frame);
        place_tool_media(&mut frame);
        assert_eq!(frame.msgs.len(), 2, "placed once");
        assert!(
            frame
                .msgs
                .iter()
                .all(|m| m.role == Role::User && m.media_only)
        );
        assert_eq!(frame.msgs[0].content, "[media from screen_shot follows]");
        assert_eq!(frame.msgs[0].media, [part("a"), part("b")]);
        assert_eq!(frame.msgs[1].media, [part("c")]);
    }
}
