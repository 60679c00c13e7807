//! The seven hook points of one turn.

use std::fmt;
use std::str::FromStr;

use crate::StagesError;

/// A hook point in a turn, in the order a turn reaches them.
///
/// The wire names (`as_str`) are the plugin SDK's stage strings and travel over the plugin protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// A new input arrived; a Response here becomes the reply without calling the LLM.
    OnInput,
    /// The LLM request is about to be built.
    PreAction,
    /// The LLM answered; plugins may rewrite its text and tool calls.
    PostAction,
    /// A tool is about to run; a Response here denies it (the text becomes the tool message).
    BeforeToolcall,
    /// A tool ran; plugins may replace its result.
    AfterToolcall,
    /// A reply (or an `output_send__*` payload) is about to leave; plugins may rewrite or block it.
    BeforeOutput,
    /// A reply left; observers only.
    AfterOutput,
}

impl Stage {
    /// Every stage, in turn order.
    pub const ALL: [Stage; 7] = [
        Stage::OnInput,
        Stage::PreAction,
        Stage::PostAction,
        Stage::BeforeToolcall,
        Stage::AfterToolcall,
        Stage::BeforeOutput,
        Stage::AfterOutput,
    ];

    /// The wire name, e.g. `"before_toolcall"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Stage::OnInput => "on_input",
            Stage::PreAction => "pre_action",
            Stage::PostAction => "post_action",
            Stage::BeforeToolcall => "before_toolcall",
            Stage::AfterToolcall => "after_toolcall",
            Stage::BeforeOutput => "before_output",
            Stage::AfterOutput => "after_output",
        }
    }

    /// The stage with this wire name, if any.
    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// Position in [`Stage::ALL`]; used to index per-stage tables.
    pub(crate) const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Stage {
    type Err = StagesError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Stage::from_name(s).ok_or_else(|| StagesError::UnknownStage { name: s.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_index_matches_all() {
        let names = [
            "on_input",
            "pre_action",
            "post_action",
            "before_toolcall",
            "after_toolcall",
            "before_output",
            "after_output",
        ];
        for (i, stage) in Stage::ALL.into_iter().enumerate() {
            assert_eq!(stage.as_str(), names[i]);
            assert_eq!(stage.index(), i);
            assert_eq!(Stage::from_name(names[i]), Some(stage));
            assert_eq!(names[i].parse::<Stage>(), Ok(stage));
        }
        assert_eq!(Stage::from_name("on-input"), None);
        assert!(matches!(
            "".parse::<Stage>(),
            Err(StagesError::UnknownStage { .. })
        ));
    }
}
