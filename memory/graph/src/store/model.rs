//! What goes into the graph (statements with their source) and how a stored fact is named.

use std::fmt;
use std::str::FromStr;

use crate::GraphError;
use crate::distill::ResolvedDate;

/// The id recall returns and `forget` / `why` accept: `r<n>` for a relation, `e<n>` for a
/// dated event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FactId {
    /// A relation row.
    Relation(i64),
    /// A dated event row.
    Event(i64),
}

impl fmt::Display for FactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FactId::Relation(id) => write!(f, "r{id}"),
            FactId::Event(id) => write!(f, "e{id}"),
        }
    }
}

impl FromStr for FactId {
    type Err = GraphError;

    fn from_str(s: &str) -> Result<Self, GraphError> {
        let bad = || GraphError::InvalidId { id: s.to_owned() };
        let (kind, digits) = s.split_at_checked(1).ok_or_else(bad)?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let n: i64 = digits.parse().map_err(|_| bad())?;
        match kind {
            "r" => Ok(FactId::Relation(n)),
            "e" => Ok(FactId::Event(n)),
            _ => Err(bad()),
        }
    }
}

/// How a statement bears on what was known before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FactMode {
    /// It is so ("I live in Porto"). Asserted again, it is merged.
    Holds,
    /// It became so at `valid_from` ("I moved to Lisbon"): a single-valued old value ends then.
    Began,
    /// It stopped being so ("I no longer work at Acme"): the open fact is closed, not deleted.
    Ended,
    /// The earlier value was wrong ("actually I live in Braga"): the old record is superseded
    /// (it never held), and the new one takes its validity interval.
    Corrects,
}

/// One subject–predicate–object claim, as a distiller or a tool states it.
#[derive(Clone, Debug, PartialEq)]
pub struct Fact {
    /// Who or what it is about.
    pub subject: String,
    /// Kind of the subject when it is first stored (`person`, `place`, `concept`…).
    pub subject_kind: &'static str,
    /// A predicate identifier (`lives_in`); unknown ones are added as multi-valued.
    pub predicate: String,
    /// The value.
    pub object: String,
    /// Kind of the object when it is first stored.
    pub object_kind: &'static str,
    /// How it bears on the previous value.
    pub mode: FactMode,
    /// How sure the distiller is, in (0, 1].
    pub confidence: f64,
    /// When it became true in the world, when the statement says so; otherwise the time it
    /// was said.
    pub valid_from: Option<ResolvedDate>,
}

/// A dated event ("moved to Lisbon", last week), kept beside the plain triples so recall can
/// use its date.
#[derive(Clone, Debug, PartialEq)]
pub struct EventSpec {
    /// Who it happened to.
    pub subject: String,
    /// What happened, in the statement's words.
    pub what: String,
    /// When, resolved against the time it was said.
    pub when: ResolvedDate,
    /// Index into the statement's `facts` of the fact this event started or ended.
    pub fact: Option<usize>,
}

/// Everything distilled from one sentence.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Statement {
    /// The sentence, verbatim: the answer to "why do you believe this".
    pub sentence: String,
    /// Its triples.
    pub facts: Vec<Fact>,
    /// Its dated events.
    pub events: Vec<EventSpec>,
}

/// Where a statement came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FactSource {
    /// The cold item it was distilled from; `None` when told directly.
    pub cold_item: Option<i64>,
    /// The turn (context event id) it was said in.
    pub turn_id: String,
    /// When it was said (Unix ms).
    pub said_ms: i64,
}

/// Whether a fact holds now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FactStatus {
    /// Valid now and not superseded.
    Current,
    /// It held until `valid_to`.
    Past,
    /// A dated event (it happened; it does not "hold").
    Event,
}

/// What one write did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TellReport {
    /// Relations stored for the first time.
    pub inserted: Vec<FactId>,
    /// Open relations asserted again (mentions and confidence raised).
    pub merged: Vec<FactId>,
    /// Relations whose validity was closed by a new value or an end.
    pub closed: Vec<FactId>,
    /// Relations superseded by a correction.
    pub superseded: Vec<FactId>,
    /// Dated events stored.
    pub events: Vec<FactId>,
    /// Claims skipped because the user had forgotten them from this source.
    pub forgotten: usize,
    /// Claims refused (invalid name or predicate), with the reason.
    pub rejected: Vec<String>,
}

impl TellReport {
    /// Whether anything was written.
    pub fn wrote(&self) -> bool {
        !(self.inserted.is_empty()
            && self.merged.is_empty()
            && self.closed.is_empty()
            && self.superseded.is_empty()
            && self.events.is_empty())
    }

    pub(crate) fn absorb(&mut self, other: TellReport) {
        self.inserted.extend(other.inserted);
        self.merged.extend(other.merged);
        self.closed.extend(other.closed);
        self.superseded.extend(other.superseded);
        self.events.extend(other.events);
        self.forgotten += other.forgotten;
        self.rejected.extend(other.rejected);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fact_ids_round_trip_and_bad_ones_are_refused() {
        for id in [FactId::Relation(7), FactId::Event(123)] {
            assert_eq!(id.to_string().parse::<FactId>().unwrap(), id);
        }
        for bad in ["", "r", "x1", "r-1", "r1a", "e 2", "里1"] {
            assert!(bad.parse::<FactId>().is_err(), "{bad}");
        }
    }
}
