//! Why a command-line value was refused: the recall options (`--dense`, `--priors`,
//! `--fusion`, `--variant`, `--weights`) each take one of a few names or a fixed shape, and say
//! which when given something else.

/// A value that is none of the forms an option takes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {given:?} ({expected})")]
pub struct OptionError {
    /// What the value was for ("fusion", "set variant", "weights").
    pub what: &'static str,
    /// The value given.
    pub given: String,
    /// The forms it may take.
    pub expected: &'static str,
}

impl OptionError {
    /// `given` refused for `what`, which takes `expected`.
    pub fn new(what: &'static str, given: &str, expected: &'static str) -> Self {
        Self {
            what,
            given: given.to_owned(),
            expected,
        }
    }
}
