//! The wire form of a call's context: which task it serves, who asks, how far they are trusted
//! and how long they wait.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Where a call comes from decides what it may do (SPEC §2.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// Compiled into the daemon: may claim L4.
    Builtin,
    /// The kernel itself.
    #[default]
    Kernel,
    /// A plugin process: capability-gated, clamped to L3.
    External,
}

/// An input's priority level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Priority {
    /// Background.
    L1,
    /// Normal.
    L2,
    /// Urgent; the highest an external plugin may claim.
    L3,
    /// Critical; built-in plugins and the kernel only.
    L4,
}

/// The `ctx` object in `tool.invoke`, `stage.invoke` and `output.invoke` params, and in the
/// params of reverse calls a handler makes while serving one (so the kernel ties them to the
/// same task).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WireContext {
    /// The kernel task the call serves; empty outside a task (a timer, startup).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    /// Who asks: `"kernel"`, or the name of the plugin or channel that started the task.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub caller: String,
    /// How far the caller is trusted.
    pub trust: Trust,
    /// Milliseconds the caller still waits, counted from when the request was written; absent:
    /// no deadline. Relative, so the two processes need no shared clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Whether the caller may cancel the call (`$/cancel`) before its deadline.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cancellable: bool,
    /// The one `tool.invoke` this is (set by the kernel for tool calls only): what
    /// `io.setToolBlocks` names to add media to that call's result.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub call_id: String,
}

impl WireContext {
    /// The deadline as seen by the receiver, counted from `received`.
    pub fn deadline_from(&self, received: Instant) -> Option<Instant> {
        self.timeout_ms
            .map(|ms| received + Duration::from_millis(ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_form_is_compact_and_defaults_apply() {
        let ctx = WireContext {
            task_id: "t1".into(),
            caller: "cli".into(),
            trust: Trust::External,
            timeout_ms: Some(1500),
            cancellable: true,
            call_id: String::new(),
        };
        let s = serde_json::to_string(&ctx).expect("serialises");
        assert_eq!(
            s,
            r#"{"task_id":"t1","caller":"cli","trust":"external","timeout_ms":1500,"cancellable":true}"#
        );
        let empty: WireContext = serde_json::from_str("{}").expect("defaults");
        assert_eq!(empty.trust, Trust::Kernel);
        assert_eq!(empty.deadline_from(Instant::now()), None);
        let now = Instant::now();
        assert_eq!(
            ctx.deadline_from(now),
            Some(now + Duration::from_millis(1500))
        );
    }
}
