//! Entities, predicates and sentences: the rows facts point at.

use std::path::Path;

use hearth_memory::index_tokens;
use rusqlite::{Connection, OptionalExtension, params};

use crate::GraphError;
use crate::error::SqlContext;
use crate::name::{normal_form, validate_name, validate_predicate};

/// The id of the entity called `name` (its normal form or an alias), creating it with `kind`
/// when missing. Every call is a mention.
pub(crate) fn upsert_entity(
    conn: &Connection,
    path: &Path,
    name: &str,
    kind: &str,
    now_ms: i64,
) -> Result<i64, GraphError> {
    const OP: &str = "upsert_entity";
    let display = validate_name(name)?;
    let norm = normal_form(&display);
    if let Some(id) = find_entity(conn, path, &norm)? {
        conn.execute(
            "UPDATE entities SET mentions = mentions + 1, updated_ms = ?2 WHERE id = ?1",
            params![id, now_ms],
        )
        .ctx(OP, path)?;
        return Ok(id);
    }
    conn.execute(
        "INSERT INTO entities (name, norm, kind, mentions, tokens, created_ms, updated_ms) \
         VALUES (?1, ?2, ?3, 1, ?4, ?5, ?5)",
        params![display, norm, kind, index_tokens(&display), now_ms],
    )
    .ctx(OP, path)?;
    Ok(conn.last_insert_rowid())
}

/// The entity whose normal form or alias is `norm`.
pub(crate) fn find_entity(
    conn: &Connection,
    path: &Path,
    norm: &str,
) -> Result<Option<i64>, GraphError> {
    conn.query_row(
        "SELECT id FROM entities WHERE norm = ?1 \
         UNION ALL SELECT entity_id FROM aliases WHERE norm = ?1 LIMIT 1",
        [norm],
        |r| r.get(0),
    )
    .optional()
    .ctx("find_entity", path)
}

/// Whether `predicate` is single-valued, adding it as multi-valued when it is new.
pub(crate) fn predicate_single(
    conn: &Connection,
    path: &Path,
    predicate: &str,
) -> Result<bool, GraphError> {
    const OP: &str = "predicate";
    validate_predicate(predicate)?;
    let known: Option<bool> = conn
        .query_row(
            "SELECT single_valued FROM predicates WHERE name = ?1",
            [predicate],
            |r| r.get(0),
        )
        .optional()
        .ctx(OP, path)?;
    if let Some(single) = known {
        return Ok(single);
    }
    conn.execute(
        "INSERT INTO predicates (name, single_valued, words) VALUES (?1, 0, ?2)",
        params![predicate, predicate.replace('_', " ")],
    )
    .ctx(OP, path)?;
    Ok(false)
}

/// The words a predicate is found by (its name and its English and Chinese phrasings).
pub(crate) fn predicate_words(
    conn: &Connection,
    path: &Path,
    predicate: &str,
) -> Result<String, GraphError> {
    conn.query_row(
        "SELECT words FROM predicates WHERE name = ?1",
        [predicate],
        |r| r.get(0),
    )
    .ctx("predicate_words", path)
}

/// The id of `text` in the sentence table.
pub(crate) fn sentence_id(conn: &Connection, path: &Path, text: &str) -> Result<i64, GraphError> {
    const OP: &str = "sentence";
    conn.execute(
        "INSERT INTO sentences (text) VALUES (?1) ON CONFLICT (text) DO NOTHING",
        [text],
    )
    .ctx(OP, path)?;
    conn.query_row("SELECT id FROM sentences WHERE text = ?1", [text], |r| {
        r.get(0)
    })
    .ctx(OP, path)
}

/// Deletes the entities in `entities` that nothing points at any more, and the sentences in
/// `sentences` no provenance or event uses: a forgotten fact leaves no name or sentence behind
/// to be found by. Only the given rows are checked, so the cost follows the forgotten fact,
/// not the size of the graph.
pub(crate) fn sweep_orphans(
    conn: &Connection,
    path: &Path,
    entities: &[i64],
    sentences: &[i64],
) -> Result<(), GraphError> {
    const OP: &str = "sweep_orphans";
    let mut entity = conn
        .prepare_cached(
            "DELETE FROM entities WHERE id = ?1 \
             AND NOT EXISTS (SELECT 1 FROM relations WHERE subject_id = ?1) \
             AND NOT EXISTS (SELECT 1 FROM relations WHERE object_id = ?1) \
             AND NOT EXISTS (SELECT 1 FROM events WHERE subject_id = ?1)",
        )
        .ctx(OP, path)?;
    for id in entities {
        entity.execute([id]).ctx(OP, path)?;
    }
    let mut sentence = conn
        .prepare_cached(
            "DELETE FROM sentences WHERE id = ?1 \
             AND NOT EXISTS (SELECT 1 FROM provenance WHERE sentence_id = ?1) \
             AND NOT EXISTS (SELECT 1 FROM events WHERE sentence_id = ?1)",
        )
        .ctx(OP, path)?;
    for id in sentences {
        sentence.execute([id]).ctx(OP, path)?;
    }
    Ok(())
}
