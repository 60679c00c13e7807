//! People: what the graph knows about one person, their traits, how they are related, and
//! who they are connected to (the social tools `person_query`, `person_set_trait`,
//! `person_relate` and `person_network`).
//!
//! A person is an entity like any other; these calls only give the facts a person's shape. A
//! trait ("birthday", "favourite colour") holds one value at a time, so setting it again
//! closes the old value as history instead of standing beside it — unless the trait is an
//! existing many-valued predicate (`likes`), where a new value is one more. A relation between
//! two people is a fact whose both ends are people; the network walks only those.

use std::collections::{HashSet, VecDeque};

use rusqlite::params;

use crate::distill::names_the_speaker;
use crate::error::SqlContext;
use crate::name::{normal_form, validate_name, validate_predicate};
use crate::store::{facts_tell_in, find_entity_in};
use crate::{
    Fact, FactHit, FactId, FactMode, FactSource, FactStatus, GraphError, GraphStore, Statement,
    TellReport, USER,
};

/// The kind people are stored with.
pub const PERSON_KIND: &str = "person";
/// Facts read per side (as subject, as object) for one person.
const PERSON_FACTS: i64 = 64;
/// Relations read per person and side at each level of the network walk.
const NETWORK_FANOUT: i64 = 16;
/// Relations the network walk reads in all.
const NETWORK_BUDGET: usize = 256;
/// The deepest network walk asked for is cut to this.
pub const MAX_NETWORK_DEPTH: u8 = 3;

/// What the graph knows about one person.
#[derive(Clone, Debug, PartialEq)]
pub struct Person {
    /// The name they are stored under.
    pub name: String,
    /// The entity's kind (`person`, or what it was first stored as).
    pub kind: String,
    /// Other names they are known by (merged entities).
    pub aliases: Vec<String>,
    /// Facts about them and facts that point at them, current before past, newest first;
    /// superseded records are never included.
    pub facts: Vec<FactHit>,
    /// Dated events that happened to them, newest first.
    pub events: Vec<FactHit>,
}

impl Person {
    /// The facts that hold now.
    pub fn current(&self) -> impl Iterator<Item = &FactHit> {
        self.facts
            .iter()
            .filter(|f| f.status == FactStatus::Current)
    }
}

/// One relation between two people found by [`GraphStore::network`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// The relation's id.
    pub id: FactId,
    /// Who it is stated of.
    pub from: String,
    /// The relation (`sister_of`).
    pub predicate: String,
    /// Whom it points at.
    pub to: String,
    /// 1 for the person's own relations, 2 for their contacts' relations, and so on.
    pub depth: u8,
}

/// `user` for the words a speaker uses of themself, so "me" and "我" find the user's facts.
fn person_name(name: &str) -> &str {
    if names_the_speaker(name) { USER } else { name }
}

/// A trait or relation phrase as a predicate: `Favourite colour` → `favourite_colour`.
pub fn predicate_from_words(words: &str) -> Result<String, GraphError> {
    let mut out = String::with_capacity(words.len());
    for c in words.trim().chars() {
        match c {
            ' ' | '-' | '_' if !out.ends_with('_') && !out.is_empty() => out.push('_'),
            ' ' | '-' | '_' => {}
            c => out.extend(c.to_lowercase()),
        }
    }
    let out = out.trim_end_matches('_').to_owned();
    validate_predicate(&out)?;
    Ok(out)
}

impl GraphStore {
    /// What is known about the person called `name` (or an alias of theirs) as of `now_ms`.
    /// An unknown name is [`GraphError::UnknownEntity`].
    pub fn person(&self, name: &str, now_ms: i64) -> Result<Person, GraphError> {
        const OP: &str = "person";
        let id = self.person_id(name)?;
        let (name, kind): (String, String) = self
            .conn
            .query_row("SELECT name, kind FROM entities WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .ctx(OP, &self.path)?;
        let aliases = self
            .conn
            .prepare_cached("SELECT alias FROM aliases WHERE entity_id = ?1 ORDER BY alias")
            .ctx(OP, &self.path)?
            .query_map([id], |r| r.get(0))
            .ctx(OP, &self.path)?
            .collect::<Result<Vec<String>, _>>()
            .ctx(OP, &self.path)?;
        let mut facts = Vec::new();
        for side in ["subject_id", "object_id"] {
            let ids = self.ids_where(
                &format!(
                    "SELECT id FROM relations WHERE {side} = ?1 AND superseded_ms IS NULL \
                     ORDER BY id DESC LIMIT +?2"
                ),
                params![id, PERSON_FACTS],
                OP,
            )?;
            for r in ids {
                facts.extend(self.hit(FactId::Relation(r), now_ms, 0.0, 0)?);
            }
        }
        // Current first; within each, the newest record first.
        facts.sort_by(|a, b| {
            (a.status != FactStatus::Current)
                .cmp(&(b.status != FactStatus::Current))
                .then(b.valid_from_ms.cmp(&a.valid_from_ms))
                .then(b.id.cmp(&a.id))
        });
        let mut events = Vec::new();
        for e in self.ids_where(
            "SELECT id FROM events WHERE subject_id = ?1 ORDER BY start_ms DESC, id DESC LIMIT +?2",
            params![id, PERSON_FACTS],
            OP,
        )? {
            events.extend(self.hit(FactId::Event(e), now_ms, 0.0, 0)?);
        }
        Ok(Person {
            name,
            kind,
            aliases,
            facts,
            events,
        })
    }

    /// The people the graph knows, most mentioned first (then by name), at most `limit`:
    /// `(name, mentions)`. The user is one of them once anything was said about them.
    pub fn people(&self, limit: usize) -> Result<Vec<(String, u32)>, GraphError> {
        const OP: &str = "people";
        self.conn
            .prepare_cached(
                "SELECT name, mentions FROM entities WHERE kind = ?1 \
                 ORDER BY mentions DESC, name LIMIT ?2",
            )
            .ctx(OP, &self.path)?
            .query_map(params![PERSON_KIND, limit as i64], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .ctx(OP, &self.path)?
            .collect::<Result<Vec<_>, _>>()
            .ctx(OP, &self.path)
    }

    /// Sets `trait_words` of the person `name` to `value`. A trait new to the graph holds one
    /// value at a time (the old value is closed, kept as history); a known many-valued
    /// predicate (`likes`) gains a value. `sentence` is the provenance (the user's words).
    pub fn set_trait(
        &mut self,
        name: &str,
        trait_words: &str,
        value: &str,
        sentence: &str,
        source: &FactSource,
    ) -> Result<TellReport, GraphError> {
        let predicate = predicate_from_words(trait_words)?;
        let fact = Fact {
            subject: person_name(name).to_owned(),
            subject_kind: PERSON_KIND,
            predicate,
            object: value.to_owned(),
            object_kind: "concept",
            mode: FactMode::Holds,
            confidence: 0.9,
            valid_from: None,
        };
        self.tell_person(fact, sentence, source, true)
    }

    /// States that `a` is `relation` of `b` ("Ana" `sister_of` "Rui"); both are stored as
    /// people. A relation new to the graph may hold many values (one can have many friends).
    pub fn relate(
        &mut self,
        a: &str,
        relation: &str,
        b: &str,
        sentence: &str,
        source: &FactSource,
    ) -> Result<TellReport, GraphError> {
        let fact = Fact {
            subject: person_name(a).to_owned(),
            subject_kind: PERSON_KIND,
            predicate: predicate_from_words(relation)?,
            object: person_name(b).to_owned(),
            object_kind: PERSON_KIND,
            mode: FactMode::Holds,
            confidence: 0.9,
            valid_from: None,
        };
        if normal_form(&validate_name(&fact.subject)?) == normal_form(&validate_name(&fact.object)?)
        {
            return Err(GraphError::InvalidName {
                name: b.to_owned(),
                reason: "a person cannot be related to themself",
            });
        }
        self.tell_person(fact, sentence, source, false)
    }

    /// The current relations between people reachable from `name` within `depth` steps
    /// (at most [`MAX_NETWORK_DEPTH`]), each relation once, with a bounded number of rows read.
    pub fn network(&self, name: &str, depth: u8) -> Result<Vec<Link>, GraphError> {
        const OP: &str = "network";
        let start = self.person_id(name)?;
        let depth = depth.clamp(1, MAX_NETWORK_DEPTH);
        let mut seen_people = HashSet::from([start]);
        let mut seen_links = HashSet::new();
        let mut queue = VecDeque::from([(start, 0u8)]);
        let mut links = Vec::new();
        let mut read = 0usize;
        while let Some((entity, level)) = queue.pop_front() {
            if level >= depth {
                continue;
            }
            for side in ["subject_id", "object_id"] {
                let sql = format!(
                    "SELECT r.id, r.subject_id, r.object_id, es.name, r.predicate, eo.name \
                     FROM relations r JOIN entities es ON es.id = r.subject_id \
                     JOIN entities eo ON eo.id = r.object_id \
                     WHERE r.{side} = ?1 AND r.superseded_ms IS NULL AND r.valid_to_ms IS NULL \
                     AND es.kind = ?2 AND eo.kind = ?2 ORDER BY r.id DESC LIMIT +?3"
                );
                type Row = (i64, i64, i64, String, String, String);
                let rows: Vec<Row> = self
                    .conn
                    .prepare_cached(&sql)
                    .ctx(OP, &self.path)?
                    .query_map(params![entity, PERSON_KIND, NETWORK_FANOUT], |r| {
                        Ok((
                            r.get(0)?,
                            r.get(1)?,
                            r.get(2)?,
                            r.get(3)?,
                            r.get(4)?,
                            r.get(5)?,
                        ))
                    })
                    .ctx(OP, &self.path)?
                    .collect::<Result<_, _>>()
                    .ctx(OP, &self.path)?;
                for (id, s, o, from, predicate, to) in rows {
                    read += 1;
                    if read > NETWORK_BUDGET {
                        return Ok(links);
                    }
                    if !seen_links.insert(id) {
                        continue;
                    }
                    links.push(Link {
                        id: FactId::Relation(id),
                        from,
                        predicate,
                        to,
                        depth: level + 1,
                    });
                    let other = if s == entity { o } else { s };
                    if seen_people.insert(other) {
                        queue.push_back((other, level + 1));
                    }
                }
            }
        }
        Ok(links)
    }

    /// Writes one fact of a person's in one transaction; with `single_if_new` a predicate the
    /// graph has not seen is declared single-valued first. Its people are marked `person`
    /// (an entity first met as a plain concept becomes one when named as a person here).
    fn tell_person(
        &mut self,
        fact: Fact,
        sentence: &str,
        source: &FactSource,
        single_if_new: bool,
    ) -> Result<TellReport, GraphError> {
        const OP: &str = "tell_person";
        let sentence = if sentence.trim().is_empty() {
            format!(
                "{} {} {}",
                fact.subject,
                fact.predicate.replace('_', " "),
                fact.object
            )
        } else {
            sentence.trim().to_owned()
        };
        let people: Vec<String> = [
            (fact.subject_kind, &fact.subject),
            (fact.object_kind, &fact.object),
        ]
        .into_iter()
        .filter(|(kind, _)| *kind == PERSON_KIND)
        .map(|(_, name)| validate_name(name).map(|n| normal_form(&n)))
        .collect::<Result<_, _>>()?;
        let path = self.path.clone();
        let embedder = self.embedder.clone();
        let tx = self.conn.transaction().ctx(OP, &path)?;
        if single_if_new {
            tx.execute(
                "INSERT INTO predicates (name, single_valued, words) VALUES (?1, 1, ?2) \
                 ON CONFLICT (name) DO NOTHING",
                params![fact.predicate, fact.predicate.replace('_', " ")],
            )
            .ctx(OP, &path)?;
        }
        let statement = Statement {
            sentence,
            facts: vec![fact],
            events: Vec::new(),
        };
        let report = facts_tell_in(
            &tx,
            &path,
            &[statement],
            source,
            crate::store::now_ms(),
            embedder.as_deref(),
        )?;
        if let Some(reason) = report.rejected.first() {
            // The claim was refused as a whole (a name or predicate); nothing to keep.
            return Err(GraphError::Rejected {
                reason: reason.clone(),
            });
        }
        for norm in people {
            tx.execute(
                "UPDATE entities SET kind = ?2 WHERE norm = ?1 AND kind = 'concept'",
                params![norm, PERSON_KIND],
            )
            .ctx(OP, &path)?;
        }
        tx.commit().ctx(OP, &path)?;
        Ok(report)
    }

    /// The entity called `name` or an alias of it; [`GraphError::UnknownEntity`] when none.
    fn person_id(&self, name: &str) -> Result<i64, GraphError> {
        let display = validate_name(person_name(name))?;
        match find_entity_in(&self.conn, &self.path, &normal_form(&display))? {
            Some(id) => Ok(id),
            None => Err(GraphError::UnknownEntity { name: display }),
        }
    }

    fn ids_where(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        op: &'static str,
    ) -> Result<Vec<i64>, GraphError> {
        self.conn
            .prepare_cached(sql)
            .ctx(op, &self.path)?
            .query_map(params, |r| r.get(0))
            .ctx(op, &self.path)?
            .collect::<Result<_, _>>()
            .ctx(op, &self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trait_words_become_predicates() {
        assert_eq!(
            predicate_from_words("Favourite colour").unwrap(),
            "favourite_colour"
        );
        assert_eq!(predicate_from_words(" sister-of ").unwrap(), "sister_of");
        assert_eq!(predicate_from_words("born  _ in").unwrap(), "born_in");
        for bad in ["", "   ", "生日", "1st", "a;b"] {
            assert!(predicate_from_words(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_speakers_words_for_themself_name_the_user() {
        for me in ["me", "I", " Myself ", "我"] {
            assert_eq!(person_name(me), USER);
        }
        assert_eq!(person_name("Ana"), "Ana");
    }
}
