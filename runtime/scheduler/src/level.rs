//! Interrupt levels and where they come from (SPEC §2.1).

use std::fmt;

/// How long a piece of interrupting work can wait. Only interrupts carry a level; queued
/// inputs have none (their effective level is 0, see [`effective_level`](super::effective_level)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Level {
    /// Can wait indefinitely: asynchronous chat messages, batch notices.
    L1 = 1,
    /// A reminder the source would like seen soon.
    L2,
    /// Needs timely handling: timers, terminal output, interactive input.
    L3,
    /// Immediate: kernel events, panics, the stop button of a built-in plugin.
    L4,
}

/// Being explicit is a privilege: an undeclared or invalid priority is the lowest level, so a
/// new plugin never gets preemption power by accident.
pub const DEFAULT_LEVEL: Level = Level::L1;

impl Level {
    /// All levels, lowest first.
    pub const ALL: [Level; 4] = [Level::L1, Level::L2, Level::L3, Level::L4];

    /// The numeric value, 1..=4.
    pub const fn as_u8(self) -> u8 {
        self as u8
    }

    /// The level with numeric value `n`, if `n` is 1..=4.
    pub const fn from_u8(n: u8) -> Option<Level> {
        match n {
            1 => Some(Level::L1),
            2 => Some(Level::L2),
            3 => Some(Level::L3),
            4 => Some(Level::L4),
            _ => None,
        }
    }

    /// The level declared by an input's `payload["priority"]`; anything that is not exactly
    /// one of the accepted spellings counts as undeclared and yields [`DEFAULT_LEVEL`].
    pub fn from_payload(priority: Option<&str>) -> Level {
        priority.and_then(parse_priority).unwrap_or(DEFAULT_LEVEL)
    }

    /// The stable display name (`L1-background` … `L4-critical`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Level::L1 => "L1-background",
            Level::L2 => "L2-message",
            Level::L3 => "L3-interactive",
            Level::L4 => "L4-critical",
        }
    }

    /// Index into the per-level arrays of [`SchedulerStats`](super::SchedulerStats) (1..=4).
    pub(crate) const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses a declared priority. Only the literal spellings `L1`..`L4` and `l1`..`l4` are
/// accepted: a typo must fall back to the default level, never be read as some other level.
pub fn parse_priority(s: &str) -> Option<Level> {
    match s {
        "L1" | "l1" => Some(Level::L1),
        "L2" | "l2" => Some(Level::L2),
        "L3" | "l3" => Some(Level::L3),
        "L4" | "l4" => Some(Level::L4),
        _ => None,
    }
}

/// The display name of a raw numeric level; values outside 1..=4 are `L?-unknown`.
pub const fn level_name(n: u8) -> &'static str {
    match Level::from_u8(n) {
        Some(l) => l.as_str(),
        None => "L?-unknown",
    }
}

/// Caps a level declared by an unprivileged source at L3. L4 ("interrupt at once") belongs to
/// the kernel, built-in plugins and a resident's parent; those callers skip this clamp.
pub fn clamp_plugin_level(l: Level) -> Level {
    l.min(Level::L3)
}
