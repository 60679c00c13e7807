//! How far the kernel trusts whoever sent an input.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::StagesError;

/// The trust an input's source earns; the ingress decides it once, from the transport the input
/// came through, and it travels (and is journaled) with the input.
///
/// Only trusted callers may stop a task, claim the consolidation slot or raise an L4 interrupt;
/// anything an external caller sends at L4 is clamped to L3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// The kernel itself (heartbeats, panic reports, kernel events).
    Kernel,
    /// A local caller that proved who it is: the CLI socket after its peer-credential check.
    Local,
    /// Anything else: plugin processes, bridges, network channels.
    External,
}

impl Trust {
    /// Whether this caller may stop, claim `_consolidation_` or raise L4.
    pub const fn is_trusted(self) -> bool {
        matches!(self, Trust::Kernel | Trust::Local)
    }

    /// The journal's and the wire's spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Trust::Kernel => "kernel",
            Trust::Local => "local",
            Trust::External => "external",
        }
    }
}

impl fmt::Display for Trust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Trust {
    type Err = StagesError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "kernel" => Ok(Trust::Kernel),
            "local" => Ok(Trust::Local),
            "external" => Ok(Trust::External),
            _ => Err(StagesError::UnknownTrust { name: s.to_owned() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_kernel_and_local_are_trusted_and_names_round_trip() {
        for (trust, name, trusted) in [
            (Trust::Kernel, "kernel", true),
            (Trust::Local, "local", true),
            (Trust::External, "external", false),
        ] {
            assert_eq!(trust.is_trusted(), trusted);
            assert_eq!(trust.as_str(), name);
            assert_eq!(name.parse::<Trust>(), Ok(trust));
            assert_eq!(
                serde_json::to_value(trust).expect("serialises"),
                serde_json::Value::String(name.to_owned())
            );
        }
        assert!(matches!(
            "Local".parse::<Trust>(),
            Err(StagesError::UnknownTrust { .. })
        ));
    }
}
