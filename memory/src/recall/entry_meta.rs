//! Who said a cold entry and when: what recall weighs about it besides its words, kept beside
//! its vector (the dense index) and read by the query's priors.

use crate::recall::vector_text::{AGENT_SOURCE, COLD_STORAGE_SOURCE};

/// What recall weighs about an entry besides its vector, kept beside it so a scan needs no
/// store lookups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EntryMeta {
    pub timestamp_ms: i64,
    pub speaker: Speaker,
    /// [`speaker_key`] of the entry's source.
    pub source_key: u64,
}

impl EntryMeta {
    /// The meta of an entry said at `timestamp_ms` by `source`.
    pub(crate) fn new(timestamp_ms: i64, source: &str) -> Self {
        Self {
            timestamp_ms,
            speaker: Speaker::of_source(source),
            source_key: speaker_key(source),
        }
    }
}

/// Whose words a cold entry holds, from its event's source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Speaker {
    /// An input: the user (or another channel) talking.
    User,
    /// The agent's own reply.
    Agent,
    /// An entry brought back from storage: input and reply together.
    Both,
}

impl Speaker {
    pub(crate) fn of_source(source: &str) -> Self {
        match source {
            AGENT_SOURCE => Self::Agent,
            COLD_STORAGE_SOURCE => Self::Both,
            _ => Self::User,
        }
    }
}

/// The key of a speaker: a hash of its source, trimmed and lower-cased as [`Speakers::add`](crate::recall::named_speakers::Speakers::add)
/// keeps a name (the whole string lower-cased: a final sigma differs from a letter-by-letter
/// one), so an entry's meta carries it in eight bytes and a query's named speakers are compared
/// without strings.
pub(crate) fn speaker_key(source: &str) -> u64 {
    source
        .trim()
        .to_lowercase()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entrys_source_says_whose_words_it_holds() {
        assert_eq!(Speaker::of_source(AGENT_SOURCE), Speaker::Agent);
        assert_eq!(Speaker::of_source(COLD_STORAGE_SOURCE), Speaker::Both);
        assert_eq!(Speaker::of_source("cli"), Speaker::User);
        let meta = EntryMeta::new(7, " Ana ");
        assert_eq!((meta.timestamp_ms, meta.speaker), (7, Speaker::User));
        assert_eq!(
            meta.source_key,
            speaker_key("ana"),
            "names compare trimmed, in any case"
        );
    }
}
