//! User-visible strings of the turn engine, kept as the original kernel wrote them so that
//! prompts, logs and tests line up with it.

/// Reply of a task whose generation was stopped and produced no text.
pub const STOPPED: &str = "已停止生成。";
/// Reply of a queued task cancelled by the stop budget.
pub const CANCELLED_BY_STOP: &str = "已取消（用户停止）。";
/// Continuation placeholder after ordinary tool results.
pub const CONTINUE_AFTER_TOOLS: &str = "请根据以上工具结果继续。";
/// Continuation placeholder after a batch that only delivered output; breaks send-loops.
pub const CONTINUE_AFTER_DELIVERY: &str =
    "若你的回复已完成，直接返回纯文本即可结束本轮，无需再调用任何工具。";
/// Prefix of an interrupt input shown to the model as a system message.
pub const INTERRUPT_PREFIX: &str = "[中断消息] ";
/// Prefix of the reply of a task that was suspended when the daemon stopped and resumed after.
pub const RESUMED_NOTICE: &str = "[resumed after a restart] ";
/// Failure of a `_consolidation_` task whose LLM call was cancelled.
pub const INTERRUPTED_BY_INPUT: &str = "interrupted by user input";

/// The reply when a task ran out of tool turns.
pub fn max_tool_turns(n: u32) -> String {
    format!("[系统] 已达到最大工具轮次 {n}，任务中止。")
}

/// The tool result when a stage denied the call.
pub fn tool_denied(name: &str) -> String {
    format!("工具 {name} 已被插件拒绝")
}

/// The reply when processing failed with `err`.
pub fn processing_error(err: &str) -> String {
    format!("处理错误: {err}")
}

/// The reply when task `id` panicked.
pub fn task_panicked(id: u64, msg: &str) -> String {
    format!("内核事件：任务 #{id} 发生 panic：{msg}（该任务已丢弃，调度器存活）")
}

/// The tool result when a call ran past its timeout.
pub fn tool_timed_out(name: &str, after: std::time::Duration) -> String {
    format!("tool {name} timed out after {after:?}")
}

/// The source note appended to every turn's stage context (three wordings, SPEC §3.2 step 7).
/// Written in English: small local models follow the language of their context, and this note
/// is in every prompt.
pub fn source_note(source: &str, channel: &str, device: Option<&str>, interrupt: bool) -> String {
    if interrupt {
        format!(
            "This is an interrupting input from {source}; replies go to output channel {channel} by default."
        )
    } else if let Some(device) = device {
        format!(
            "This input comes from device {device} ({source}); replies go to output channel {channel} by default."
        )
    } else {
        format!(
            "This input comes from {source}; replies go to output channel {channel} by default."
        )
    }
}
