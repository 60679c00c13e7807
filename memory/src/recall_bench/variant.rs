//! Dev sets derived from a `hearth-recall/1` file by a fixed transformation, so a ranking can
//! be checked on conditions a file does not show by itself:
//!
//! - **undated**: every question is asked "now" (no `time`): nothing about when it was asked
//!   can point at its sessions, and the whole history lies before the question, as it does for a
//!   live assistant.
//! - **named**: the two sides of each conversation speak under people's names instead of
//!   `user` / `assistant`, as in a household's or a group's history: recall can no longer tell
//!   the assistant's words from a person's by the speaker.
//! - **third-person**: named, and the questions name them too ("what did Ana buy", "the hotel
//!   Ben recommended") instead of "I" and "you", as someone asks about other people's
//!   conversations: the question no longer says whose words it is after by its pronouns.
//! - **short-turns**: third-person, and each turn cut into its sentences, one item each (see
//!   `short_turns`), as in a chat between people: many short, generic lines.
//!
//! Transformations only rewrite fields; ids, sessions and evidence stay, so the same questions
//! are scored against the same items.

use std::collections::HashSet;
use std::str::FromStr;

use super::short_turns::split_turns;
use super::third_person::third_person;
use super::{AGENT_SOURCE, RecallSet};

/// The name the user side speaks under in the named variant.
pub const NAMED_USER: &str = "Ana";
/// The name the assistant side speaks under in the named variant.
pub const NAMED_PARTNER: &str = "Ben";

/// A transformation of a recall set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SetVariant {
    /// The file as it is.
    #[default]
    AsIs,
    /// Every question asked now.
    Undated,
    /// Speakers renamed to people's names.
    Named,
    /// Speakers named, and the questions ask about them by name.
    ThirdPerson,
    /// Third-person, each turn cut into sentences.
    ShortTurns,
}

impl SetVariant {
    /// Every variant, in report order.
    pub const ALL: [SetVariant; 5] = [
        SetVariant::AsIs,
        SetVariant::Undated,
        SetVariant::Named,
        SetVariant::ThirdPerson,
        SetVariant::ShortTurns,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            SetVariant::AsIs => "as-is",
            SetVariant::Undated => "undated",
            SetVariant::Named => "named",
            SetVariant::ThirdPerson => "third-person",
            SetVariant::ShortTurns => "short-turns",
        }
    }

    /// The name of the items' rewrite, when the items differ from the file's (a kept store of
    /// the file cannot serve them); variants that rewrite items alike (named and third-person
    /// differ in their questions only) share a kept store.
    pub fn items_name(self) -> Option<&'static str> {
        match self {
            SetVariant::AsIs | SetVariant::Undated => None,
            SetVariant::Named | SetVariant::ThirdPerson => Some(SetVariant::Named.name()),
            SetVariant::ShortTurns => Some(SetVariant::ShortTurns.name()),
        }
    }

    /// `set` transformed; its name gets the variant's as a suffix.
    pub fn apply(self, mut set: RecallSet) -> RecallSet {
        match self {
            SetVariant::AsIs => return set,
            SetVariant::Undated => {
                for q in &mut set.questions {
                    q.time = None;
                }
            }
            SetVariant::Named => name_speakers(&mut set),
            SetVariant::ThirdPerson | SetVariant::ShortTurns => {
                name_speakers(&mut set);
                for q in &mut set.questions {
                    q.text = third_person(&q.text, NAMED_USER, NAMED_PARTNER);
                }
                if self == SetVariant::ShortTurns {
                    split_turns(&mut set);
                }
            }
        }
        set.name = format!("{}+{}", set.name, self.name());
        set
    }
}

/// Every item of `set` said by [`NAMED_USER`] or, the assistant's, by [`NAMED_PARTNER`].
fn name_speakers(set: &mut RecallSet) {
    for item in set.corpora.values_mut().flatten() {
        item.speaker = if item.speaker == "assistant" || item.speaker == AGENT_SOURCE {
            NAMED_PARTNER
        } else {
            NAMED_USER
        }
        .to_owned();
    }
}

impl FromStr for SetVariant {
    type Err = crate::OptionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SetVariant::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| {
                crate::OptionError::new(
                    "set variant",
                    s,
                    "as-is, undated, named, third-person, short-turns",
                )
            })
    }
}

/// A smaller copy of `set` with about `n` of its questions, for a machine that cannot embed a
/// whole set in the time at hand. Questions are picked by a hash of their id (the same ones on
/// every run, spread over the file's categories); in each corpus the sessions holding their
/// evidence stay, and of the other sessions the same share as of the questions, picked the same
/// way, so a pooled corpus keeps its proportion of distractors per question. Corpora left
/// without a question are dropped. `n` at or above the number of questions returns `set`.
pub fn sample(mut set: RecallSet, n: usize) -> RecallSet {
    let total = set.questions.len();
    if n >= total || total == 0 {
        return set;
    }
    let share = n as f64 / total as f64;
    let picked = |id: &str| (fnv1a(id) as f64 / u64::MAX as f64) < share;
    set.questions.retain(|q| picked(&q.id));
    let kept_corpora: HashSet<String> = set.questions.iter().map(|q| q.corpus.clone()).collect();
    let evidence: HashSet<&str> = set
        .questions
        .iter()
        .flat_map(|q| q.evidence.iter().map(String::as_str))
        .collect();
    let mut corpora = std::collections::BTreeMap::new();
    for (id, items) in std::mem::take(&mut set.corpora) {
        if !kept_corpora.contains(&id) {
            continue;
        }
        let evidence_sessions: HashSet<&str> = items
            .iter()
            .filter(|i| evidence.contains(i.id.as_str()))
            .map(|i| i.session.as_str())
            .collect();
        // A corpus of one question's history is kept whole; a pooled one is thinned.
        let pooled =
            set.questions.iter().filter(|q| q.corpus == id).count() > 1 || items.len() > 1_000;
        let kept: Vec<_> = items
            .iter()
            .filter(|i| {
                !pooled || evidence_sessions.contains(i.session.as_str()) || picked(&i.session)
            })
            .cloned()
            .collect();
        corpora.insert(id, kept);
    }
    set.corpora = corpora;
    set.name = format!("{}~{}q", set.name, set.questions.len());
    set
}

/// 64-bit FNV-1a: a fixed, platform-independent hash for picking samples.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
