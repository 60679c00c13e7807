//! The crate-boundary error type.

/// Everything that can go wrong at the `hearth-stages` boundary.
///
/// Turn-time failures (a handler's `Err`, a panic, a timeout, a failed tool) are not errors of this
/// type: they are recorded in the turn's `StageContext::errors` or handed back as the tool's text,
/// because the model or the log must see them and the turn must go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StagesError {
    /// A tool of that name is already in the registry (names are global across every source).
    #[error("tool {name} is already offered by {existing}; {incoming} cannot offer it too")]
    DuplicateTool {
        /// The tool's name.
        name: String,
        /// The owner that has it (`plugin weather`, `mcp server fs`).
        existing: String,
        /// The owner that was refused.
        incoming: String,
    },
    /// The name would make an upstream LLM API reject the whole request (HTTP 400).
    #[error("invalid tool name {name:?}: it must match ^[a-zA-Z0-9_-]{{1,64}}$")]
    InvalidToolName {
        /// The refused name.
        name: String,
    },
    /// An output channel name breaks the channel name rule.
    #[error("invalid output channel name {name:?}: {reason}")]
    InvalidChannelName {
        /// The refused name.
        name: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// An output channel must be able to send at least one kind of content.
    #[error("output channel {name} declares no capabilities")]
    NoCapabilities {
        /// The channel's name.
        name: String,
    },
    /// A stage name that is not one of the seven.
    #[error("unknown stage {name:?}")]
    UnknownStage {
        /// The name given.
        name: String,
    },
    /// A trust name that is not `kernel`, `local` or `external` (e.g. in a journal row).
    #[error("unknown trust {name:?}")]
    UnknownTrust {
        /// The name given.
        name: String,
    },
}
