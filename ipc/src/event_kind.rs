//! Event type codes shared by the bus, the ring and plugins.
//!
//! Codes 0–9 are the original kernel's wire codes and must never change; Hearth adds 10 and 11.
//! A code this build does not know folds to [`EventKind::Unknown`] (`0xFFFF_FFFF`), exactly as
//! the original's consumers did, so a newer kernel never breaks an older plugin.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The type of one event on the bus and in the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum EventKind {
    /// `raw_input`
    RawInput = 0,
    /// `agent_output`
    AgentOutput = 1,
    /// `agent_llm_chain`
    AgentLlmChain = 2,
    /// `tool_call`
    ToolCall = 3,
    /// `reasoning`
    Reasoning = 4,
    /// `stage`
    Stage = 5,
    /// `system`
    System = 6,
    /// `reasoning_delta`
    ReasoningDelta = 7,
    /// `content_delta`
    ContentDelta = 8,
    /// `skill_detected`
    SkillDetected = 9,
    /// `scheduler`
    Scheduler = 10,
    /// `terminal_output`
    TerminalOutput = 11,
    /// `memory_candidate`: a finished turn offered to whoever keeps memories (SPEC §3.7).
    MemoryCandidate = 12,
    /// A code this build does not know.
    Unknown = 0xFFFF_FFFF,
}

impl EventKind {
    /// Every known kind, in code order (excludes [`EventKind::Unknown`]).
    pub const ALL: [EventKind; 13] = [
        EventKind::RawInput,
        EventKind::AgentOutput,
        EventKind::AgentLlmChain,
        EventKind::ToolCall,
        EventKind::Reasoning,
        EventKind::Stage,
        EventKind::System,
        EventKind::ReasoningDelta,
        EventKind::ContentDelta,
        EventKind::SkillDetected,
        EventKind::Scheduler,
        EventKind::TerminalOutput,
        EventKind::MemoryCandidate,
    ];

    /// The wire code (`0xFFFF_FFFF` for [`EventKind::Unknown`]).
    #[inline]
    pub const fn code(self) -> u32 {
        self as u32
    }

    /// The kind for a wire code; codes this build does not know are [`EventKind::Unknown`].
    #[inline]
    pub const fn from_code(code: u32) -> EventKind {
        match code {
            0 => EventKind::RawInput,
            1 => EventKind::AgentOutput,
            2 => EventKind::AgentLlmChain,
            3 => EventKind::ToolCall,
            4 => EventKind::Reasoning,
            5 => EventKind::Stage,
            6 => EventKind::System,
            7 => EventKind::ReasoningDelta,
            8 => EventKind::ContentDelta,
            9 => EventKind::SkillDetected,
            10 => EventKind::Scheduler,
            11 => EventKind::TerminalOutput,
            12 => EventKind::MemoryCandidate,
            _ => EventKind::Unknown,
        }
    }

    /// The bus name used in envelopes and subscriptions (`"content_delta"`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            EventKind::RawInput => "raw_input",
            EventKind::AgentOutput => "agent_output",
            EventKind::AgentLlmChain => "agent_llm_chain",
            EventKind::ToolCall => "tool_call",
            EventKind::Reasoning => "reasoning",
            EventKind::Stage => "stage",
            EventKind::System => "system",
            EventKind::ReasoningDelta => "reasoning_delta",
            EventKind::ContentDelta => "content_delta",
            EventKind::SkillDetected => "skill_detected",
            EventKind::Scheduler => "scheduler",
            EventKind::TerminalOutput => "terminal_output",
            EventKind::MemoryCandidate => "memory_candidate",
            EventKind::Unknown => "unknown",
        }
    }

    /// The kind for a bus name; `None` for a name no kind has, so a typo in a subscription is
    /// reported rather than silently subscribing to nothing. `"unknown"` is not a name.
    pub fn from_name(name: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// This kind's bit in a [`KindMask`] (`1 << code`); 0 for [`EventKind::Unknown`], which only
    /// [`KindMask::ALL`] lets through.
    #[inline]
    pub const fn bit(self) -> u32 {
        match self {
            EventKind::Unknown => 0,
            known => 1 << known.code(),
        }
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EventKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EventKind {
    /// Lenient like the ring: a name this build does not know becomes [`EventKind::Unknown`].
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Ok(EventKind::from_name(&name).unwrap_or(EventKind::Unknown))
    }
}

/// Which kinds a reader wants: bit `1 << code` per kind, and the empty mask means "all"
/// (the original's convention, kept so plugin subscriptions read the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KindMask(u32);

impl KindMask {
    /// Every event, including kinds this build does not know.
    pub const ALL: KindMask = KindMask(0);

    /// The mask of exactly these kinds ([`EventKind::Unknown`] contributes nothing).
    pub fn of(kinds: &[EventKind]) -> KindMask {
        KindMask(kinds.iter().fold(0, |bits, k| bits | k.bit()))
    }

    /// This mask with `kind` added. Adding to [`KindMask::ALL`] narrows it to that one kind.
    #[must_use]
    pub const fn with(self, kind: EventKind) -> KindMask {
        KindMask(self.0 | kind.bit())
    }

    /// The mask from raw bits as carried on the wire.
    pub const fn from_bits(bits: u32) -> KindMask {
        KindMask(bits)
    }

    /// The raw bits (0 = all).
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether a reader with this mask receives `kind`.
    #[inline]
    pub const fn contains(self, kind: EventKind) -> bool {
        self.0 == 0 || self.0 & kind.bit() != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_round_trip_for_every_kind() {
        for (i, kind) in EventKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.code(), i as u32);
            assert_eq!(EventKind::from_code(kind.code()), kind);
            assert_eq!(EventKind::from_name(kind.as_str()), Some(kind));
        }
        assert_eq!(EventKind::ContentDelta.as_str(), "content_delta");
        assert_eq!(EventKind::TerminalOutput.code(), 11);
    }

    #[test]
    fn unknown_codes_and_names_fold_or_fail() {
        assert_eq!(EventKind::from_code(13), EventKind::Unknown);
        assert_eq!(EventKind::from_code(0xFFFF_FFFF), EventKind::Unknown);
        assert_eq!(EventKind::Unknown.code(), 0xFFFF_FFFF);
        assert_eq!(EventKind::from_name("unknown"), None);
        assert_eq!(EventKind::from_name("Content_Delta"), None);
    }

    #[test]
    fn mask_zero_is_all_and_bits_select() {
        assert!(KindMask::ALL.contains(EventKind::Unknown));
        assert!(KindMask::ALL.contains(EventKind::Stage));
        let m = KindMask::of(&[EventKind::ContentDelta, EventKind::ReasoningDelta]);
        assert_eq!(m.bits(), (1 << 8) | (1 << 7));
        assert!(m.contains(EventKind::ContentDelta));
        assert!(!m.contains(EventKind::Stage));
        assert!(!m.contains(EventKind::Unknown));
        assert_eq!(KindMask::ALL.with(EventKind::System).bits(), 1 << 6);
    }

    #[test]
    fn serde_uses_names_and_is_lenient_on_read() {
        let json = serde_json::to_string(&EventKind::SkillDetected).expect("serialise");
        assert_eq!(json, "\"skill_detected\"");
        let back: EventKind = serde_json::from_str("\"terminal_output\"").expect("parse");
        assert_eq!(back, EventKind::TerminalOutput);
        let odd: EventKind = serde_json::from_str("\"from_the_future\"").expect("parse");
        assert_eq!(odd, EventKind::Unknown);
    }
}
