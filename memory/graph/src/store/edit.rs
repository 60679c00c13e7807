//! Correcting a stored fact by id: the model's or the user's "no, it is Braga".

use rusqlite::{OptionalExtension, params};

use super::GraphStore;
use super::model::{Fact, FactId, FactMode, FactSource, Statement, TellReport};
use crate::GraphError;
use crate::error::SqlContext;

/// A stored relation, by its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelationParts {
    /// Subject name.
    pub subject: String,
    /// Predicate.
    pub predicate: String,
    /// Object name.
    pub object: String,
    /// Whether the predicate takes one value at a time.
    pub single_valued: bool,
}

impl GraphStore {
    /// The subject, predicate and object of relation `id`.
    pub fn relation(&self, id: FactId) -> Result<RelationParts, GraphError> {
        let FactId::Relation(rid) = id else {
            return Err(GraphError::InvalidId { id: id.to_string() });
        };
        self.conn
            .query_row(
                "SELECT e1.name, r.predicate, e2.name, r.single_valued FROM relations r \
                 JOIN entities e1 ON e1.id = r.subject_id JOIN entities e2 ON e2.id = r.object_id \
                 WHERE r.id = ?1",
                params![rid],
                |r| {
                    Ok(RelationParts {
                        subject: r.get(0)?,
                        predicate: r.get(1)?,
                        object: r.get(2)?,
                        single_valued: r.get::<_, i64>(3)? != 0,
                    })
                },
            )
            .optional()
            .ctx("relation", &self.path)?
            .ok_or_else(|| GraphError::NotFound { id: id.to_string() })
    }

    /// Replaces the object of relation `id` with `object`, said as `sentence`. A single-valued
    /// fact is superseded (it never held; the new one takes its interval and the history stays
    /// for `why`); a multi-valued one is forgotten and the new value stored, since a correction
    /// of one of several values says nothing about the others.
    pub fn edit(
        &mut self,
        id: FactId,
        object: &str,
        sentence: &str,
        source: &FactSource,
    ) -> Result<TellReport, GraphError> {
        let old = self.relation(id)?;
        crate::validate_name(object)?;
        let statement = Statement {
            sentence: sentence.to_owned(),
            facts: vec![Fact {
                subject: old.subject.clone(),
                subject_kind: "concept",
                predicate: old.predicate.clone(),
                object: object.to_owned(),
                object_kind: "concept",
                mode: FactMode::Corrects,
                confidence: 1.0,
                valid_from: None,
            }],
            events: Vec::new(),
        };
        let report = self.tell(&[statement], source)?;
        let kept = [&report.superseded, &report.merged, &report.inserted]
            .iter()
            .any(|ids| ids.contains(&id));
        if !old.single_valued && !kept {
            self.forget_with(id, super::forget::Words::Keep)?;
        }
        Ok(report)
    }
}
