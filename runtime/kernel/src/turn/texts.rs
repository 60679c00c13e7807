//! User-visible strings of the turn engine and the placeholders it shows the model, each in
//! the two languages of [`Lang`]. The Chinese wordings are the original kernel's, so prompts,
//! logs and tests line up with it; which one a task uses is decided per input (see
//! [`crate::lang`]).

pub use crate::lang::Lang;

/// Picks the wording of `lang`.
fn pick(lang: Lang, en: &'static str, zh: &'static str) -> &'static str {
    match lang {
        Lang::En => en,
        Lang::Zh => zh,
    }
}

/// Reply of a task whose generation was stopped and produced no text.
pub fn stopped(lang: Lang) -> &'static str {
    pick(lang, "Generation stopped.", "已停止生成。")
}

/// Reply of a queued task cancelled by the stop budget.
pub fn cancelled_by_stop(lang: Lang) -> &'static str {
    pick(
        lang,
        "Cancelled (stopped by the user).",
        "已取消（用户停止）。",
    )
}

/// Continuation placeholder after ordinary tool results.
pub fn continue_after_tools(lang: Lang) -> &'static str {
    pick(
        lang,
        "Continue based on the tool results above.",
        "请根据以上工具结果继续。",
    )
}

/// Continuation placeholder after a batch that only delivered output; breaks send-loops.
pub fn continue_after_delivery(lang: Lang) -> &'static str {
    pick(
        lang,
        "If your reply is complete, answer with plain text to end this turn; do not call any more tools.",
        "若你的回复已完成，直接返回纯文本即可结束本轮，无需再调用任何工具。",
    )
}

/// Whether `text` is a continuation placeholder, in either language (a resumed frame may carry
/// one written before the language was decided).
pub fn is_continuation(text: &str) -> bool {
    [Lang::En, Lang::Zh]
        .into_iter()
        .any(|lang| text == continue_after_tools(lang) || text == continue_after_delivery(lang))
}

/// Prefix of an interrupt input shown to the model as a system message.
pub fn interrupt_prefix(lang: Lang) -> &'static str {
    pick(lang, "[interrupt] ", "[中断消息] ")
}

/// Prefix of the reply of a task that was suspended when the daemon stopped and resumed after.
pub fn resumed_notice(lang: Lang) -> &'static str {
    pick(lang, "[resumed after a restart] ", "[重启后继续] ")
}

/// Failure of a `_consolidation_` task whose LLM call was cancelled (a log line, never shown).
pub const INTERRUPTED_BY_INPUT: &str = "interrupted by user input";

/// The reply when a task ran out of tool turns.
pub fn max_tool_turns(lang: Lang, n: u32) -> String {
    match lang {
        Lang::En => format!("[system] Reached the limit of {n} tool rounds; the task was stopped."),
        Lang::Zh => format!("[系统] 已达到最大工具轮次 {n}，任务中止。"),
    }
}

/// The tool result when a stage denied the call.
pub fn tool_denied(lang: Lang, name: &str) -> String {
    match lang {
        Lang::En => format!("tool {name} was denied by a plugin"),
        Lang::Zh => format!("工具 {name} 已被插件拒绝"),
    }
}

/// The reply when processing failed with `err`.
pub fn processing_error(lang: Lang, err: &str) -> String {
    match lang {
        Lang::En => format!("Processing error: {err}"),
        Lang::Zh => format!("处理错误: {err}"),
    }
}

/// The kernel interrupt raised when task `id` panicked.
pub fn task_panicked(lang: Lang, id: u64, msg: &str) -> String {
    match lang {
        Lang::En => format!(
            "Kernel event: task #{id} panicked: {msg} (the task was discarded; the scheduler is alive)"
        ),
        Lang::Zh => format!("内核事件：任务 #{id} 发生 panic：{msg}（该任务已丢弃，调度器存活）"),
    }
}

/// The text of the message that shows a tool's media to the model (the original's Chinese).
pub fn tool_media_header(lang: Lang, tool: &str) -> String {
    match lang {
        Lang::En => format!("[media from {tool} follows]"),
        Lang::Zh => format!("[以下是 {tool} 注入的媒体内容]"),
    }
}

/// The tool result when a call ran past its timeout.
pub fn tool_timed_out(lang: Lang, name: &str, after: std::time::Duration) -> String {
    match lang {
        Lang::En => format!("tool {name} timed out after {after:?}"),
        Lang::Zh => format!("工具 {name} 在 {after:?} 后超时"),
    }
}

/// The timeline block in `lang`: its header is the original's Chinese one, which turns a small
/// model to Chinese when the user writes English.
pub fn localize_timeline(lang: Lang, timeline: String) -> String {
    match (lang, timeline.strip_prefix(hearth_memory::TIMELINE_HEADER)) {
        (Lang::En, Some(rest)) => format!("Earlier in this conversation:{rest}"),
        _ => timeline,
    }
}

/// The recalled-memory block's header for English input: the original's 【相关记忆】 reads as
/// an instruction to answer in Chinese, as the timeline's header did.
pub const MEMORY_HEADER_EN: &str = "Related memories:";

/// The recalled-memory block in `lang` (its header; the lines are the user's own words).
pub fn localize_memory(lang: Lang, block: String) -> String {
    match (lang, block.strip_prefix(hearth_memory::INJECT_HEADER)) {
        (Lang::En, Some(rest)) => format!("{MEMORY_HEADER_EN}{rest}"),
        _ => block,
    }
}

/// The source note of a turn (SPEC §3.2 step 7), in the input's language; `None` when it would
/// say nothing the model needs. A small local model reads every line it is given as something
/// to talk about: told "this input comes from cli; replies go to output channel cli", it
/// answers "hello" with a word on the cli. So the note is left out when the reply goes back
/// where the input came from, and otherwise states only what differs, in a few words.
pub fn source_note(
    lang: Lang,
    source: &str,
    channel: &str,
    device: Option<&str>,
    interrupt: bool,
) -> Option<String> {
    let elsewhere = channel != source;
    if !interrupt && device.is_none() && !elsewhere {
        return None;
    }
    let mut parts = Vec::new();
    match (lang, interrupt) {
        (Lang::En, true) => parts.push(format!("Interrupting message from {source}.")),
        (Lang::Zh, true) => parts.push(format!("来自 {source} 的插话。")),
        _ => {}
    }
    match (lang, device) {
        (Lang::En, Some(device)) => parts.push(format!("Sent from device {device}.")),
        (Lang::Zh, Some(device)) => parts.push(format!("发自设备 {device}。")),
        _ => {}
    }
    match (lang, elsewhere) {
        (Lang::En, true) => parts.push(format!("Your reply goes to {channel}.")),
        (Lang::Zh, true) => parts.push(format!("回复发往 {channel}。")),
        _ => {}
    }
    Some(parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_text_exists_in_both_languages_and_differs() {
        let en = Lang::En;
        let zh = Lang::Zh;
        let pairs = [
            (stopped(en).to_string(), stopped(zh).to_string()),
            (cancelled_by_stop(en).into(), cancelled_by_stop(zh).into()),
            (
                continue_after_tools(en).into(),
                continue_after_tools(zh).into(),
            ),
            (
                continue_after_delivery(en).into(),
                continue_after_delivery(zh).into(),
            ),
            (interrupt_prefix(en).into(), interrupt_prefix(zh).into()),
            (resumed_notice(en).into(), resumed_notice(zh).into()),
            (max_tool_turns(en, 3), max_tool_turns(zh, 3)),
            (tool_denied(en, "x"), tool_denied(zh, "x")),
            (processing_error(en, "boom"), processing_error(zh, "boom")),
            (task_panicked(en, 1, "m"), task_panicked(zh, 1, "m")),
            (
                source_note(en, "cli", "telegram", Some("phone"), true).unwrap_or_default(),
                source_note(zh, "cli", "telegram", Some("phone"), true).unwrap_or_default(),
            ),
        ];
        for (en_text, zh_text) in pairs {
            assert_ne!(en_text, zh_text);
            assert_eq!(Lang::detect(&en_text), Lang::En, "{en_text}");
            assert_eq!(Lang::detect(&zh_text), Lang::Zh, "{zh_text}");
        }
    }

    #[test]
    fn the_source_note_says_only_what_differs_from_a_reply_to_the_sender() {
        for lang in [Lang::En, Lang::Zh] {
            assert_eq!(source_note(lang, "cli", "cli", None, false), None);
            let device = source_note(lang, "cli", "cli", Some("kitchen"), false).unwrap();
            assert!(
                device.contains("kitchen") && !device.contains("cli"),
                "{device}"
            );
            let elsewhere = source_note(lang, "cron", "telegram", None, false).unwrap();
            assert!(
                elsewhere.contains("telegram") && !elsewhere.contains("cron"),
                "{elsewhere}"
            );
            let interrupt = source_note(lang, "cli", "cli", None, true).unwrap();
            assert!(interrupt.contains("cli"), "{interrupt}");
        }
        // Short: a handful of words, not a paragraph the model answers instead of the user.
        let all = source_note(Lang::En, "cli", "telegram", Some("phone"), true).unwrap();
        assert!(all.split_whitespace().count() <= 14, "{all}");
    }

    #[test]
    fn an_english_task_reads_an_english_timeline_header() {
        let timeline = format!("{}\n[12:00] cli: hi", hearth_memory::TIMELINE_HEADER);
        let en = localize_timeline(Lang::En, timeline.clone());
        assert_eq!(en, "Earlier in this conversation:\n[12:00] cli: hi");
        assert_eq!(localize_timeline(Lang::Zh, timeline.clone()), timeline);
        assert_eq!(localize_timeline(Lang::En, "other".into()), "other");
    }

    #[test]
    fn an_english_task_reads_an_english_memory_header() {
        let block = format!(
            "{}\n[05-01 12:00] I live in Porto",
            hearth_memory::INJECT_HEADER
        );
        let en = localize_memory(Lang::En, block.clone());
        assert_eq!(en, "Related memories:\n[05-01 12:00] I live in Porto");
        assert_eq!(localize_memory(Lang::Zh, block.clone()), block);
        assert_eq!(localize_memory(Lang::En, "other".into()), "other");
    }

    #[test]
    fn placeholders_are_recognised_in_either_language() {
        for lang in [Lang::En, Lang::Zh] {
            assert!(is_continuation(continue_after_tools(lang)));
            assert!(is_continuation(continue_after_delivery(lang)));
        }
        assert!(!is_continuation("continue"));
    }
}
