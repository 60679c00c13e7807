//! What an output channel can carry.

use std::ops::{BitOr, BitOrAssign};

use serde::{Deserialize, Serialize};

/// A set of output capability bits (the original's wire values).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Caps(pub u32);

/// Plain text.
pub const CAP_TEXT: Caps = Caps(1);
/// Files (sent as attachments).
pub const CAP_FILE: Caps = Caps(2);
/// Images.
pub const CAP_IMAGE: Caps = Caps(4);
/// Audio.
pub const CAP_AUDIO: Caps = Caps(8);
/// Structured data (JSON blocks).
pub const CAP_STRUCTURED: Caps = Caps(16);

const NAMED: [(Caps, &str); 5] = [
    (CAP_TEXT, "text"),
    (CAP_FILE, "file"),
    (CAP_IMAGE, "image"),
    (CAP_AUDIO, "audio"),
    (CAP_STRUCTURED, "structured"),
];

impl Caps {
    /// The raw bits, as on the wire.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Every bit of `other` is set here.
    pub const fn contains(self, other: Caps) -> bool {
        self.0 & other.0 == other.0
    }

    /// No known capability at all (the original's "unknown channel").
    pub const fn is_empty(self) -> bool {
        self.0 & Caps::ALL_KNOWN.0 == 0
    }

    /// Every defined bit.
    pub const ALL_KNOWN: Caps = Caps(31);

    /// The string form: the names of the set bits, lowest bit first; unknown bits are left out.
    pub fn names(self) -> Vec<&'static str> {
        NAMED
            .iter()
            .filter(|(cap, _)| self.contains(*cap))
            .map(|&(_, name)| name)
            .collect()
    }

    /// The capability an `output_send__*` `type` needs: text→text, voice/audio→audio, image, file.
    pub fn for_send_type(kind: &str) -> Option<Caps> {
        match kind {
            "text" => Some(CAP_TEXT),
            "voice" | "audio" => Some(CAP_AUDIO),
            "image" => Some(CAP_IMAGE),
            "file" => Some(CAP_FILE),
            _ => None,
        }
    }
}

impl BitOr for Caps {
    type Output = Caps;

    fn bitor(self, rhs: Caps) -> Caps {
        Caps(self.0 | rhs.0)
    }
}

impl BitOrAssign for Caps {
    fn bitor_assign(&mut self, rhs: Caps) {
        self.0 |= rhs.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_and_names() {
        assert_eq!(
            [CAP_TEXT, CAP_FILE, CAP_IMAGE, CAP_AUDIO, CAP_STRUCTURED].map(Caps::bits),
            [1, 2, 4, 8, 16]
        );
        assert_eq!(
            Caps(31).names(),
            ["text", "file", "image", "audio", "structured"]
        );
        assert_eq!((CAP_AUDIO | CAP_TEXT).names(), ["text", "audio"]);
        assert_eq!(Caps(64).names(), Vec::<&str>::new());
        assert!(Caps(64).is_empty());
        assert!(!(CAP_TEXT | CAP_FILE).contains(CAP_IMAGE));
        assert_eq!(Caps::for_send_type("voice"), Some(CAP_AUDIO));
        assert_eq!(Caps::for_send_type("video"), None);
    }
}
