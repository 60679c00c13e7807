//! Lists of ids read by one statement of one parameter: the shapes a forget, the notes of its
//! words and the removal of a cold item share.

use std::path::Path;

use rusqlite::Connection;

use super::model::FactId;
use crate::GraphError;
use crate::error::SqlContext;

/// The first column, an id, of each row `sql` selects for `arg`.
pub(super) fn ids(
    conn: &Connection,
    path: &Path,
    op: &'static str,
    sql: &str,
    arg: impl rusqlite::ToSql,
) -> Result<Vec<i64>, GraphError> {
    conn.prepare_cached(sql)
        .ctx(op, path)?
        .query_map([arg], |r| r.get(0))
        .ctx(op, path)?
        .collect::<Result<_, _>>()
        .ctx(op, path)
}

/// The facts `sql` selects for `arg`, each row a kind (`'r'` a relation, `'e'` an event) and
/// its id.
pub(super) fn fact_ids(
    conn: &Connection,
    path: &Path,
    op: &'static str,
    sql: &str,
    arg: impl rusqlite::ToSql,
) -> Result<Vec<FactId>, GraphError> {
    conn.prepare_cached(sql)
        .ctx(op, path)?
        .query_map([arg], |r| {
            let (kind, id): (String, i64) = (r.get(0)?, r.get(1)?);
            Ok(if kind == "r" {
                FactId::Relation(id)
            } else {
                FactId::Event(id)
            })
        })
        .ctx(op, path)?
        .collect::<Result<_, _>>()
        .ctx(op, path)
}
