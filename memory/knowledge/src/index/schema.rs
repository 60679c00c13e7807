//! The index's SQLite schema. `PRAGMA application_id` marks the file as a Hearth knowledge index
//! and `PRAGMA user_version` is the schema version, so a foreign or newer file is recognised
//! (and, the index being derived from the files, set aside and rebuilt).

use rusqlite::Connection;

/// `application_id` of a Hearth knowledge index ("HKNW").
pub const KNOWLEDGE_APPLICATION_ID: i64 = 0x484b_4e57;
/// The schema version this build writes.
pub const KNOWLEDGE_SCHEMA_VERSION: i64 = 1;

// `hash` is NULL exactly when the document is skipped (then `skipped` says why and it has no
// passages). `vector_fp` is the fingerprint its passages' vectors were made with, NULL when
// they have none yet: a document whose `vector_fp` differs from the embedder's is re-embedded.
//
// The FTS5 table is external-content over `passages.tokens`: tokens are stored once, the index
// keeps postings only, and the triggers are its only writers.
const V1: &str = r#"
CREATE TABLE docs (
    id        INTEGER PRIMARY KEY,
    name      TEXT    NOT NULL UNIQUE,
    mtime_ns  INTEGER NOT NULL,
    size      INTEGER NOT NULL CHECK (size >= 0),
    hash      INTEGER,
    skipped   TEXT,
    vector_fp TEXT,
    CHECK ((hash IS NULL) = (skipped IS NOT NULL))
) STRICT;

CREATE TABLE passages (
    id     INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL REFERENCES docs (id) ON DELETE CASCADE,
    ord    INTEGER NOT NULL,
    text   TEXT    NOT NULL,
    tokens TEXT    NOT NULL,
    vector BLOB,
    UNIQUE (doc_id, ord)
) STRICT;

CREATE VIRTUAL TABLE passages_fts USING fts5 (
    tokens, content = 'passages', content_rowid = 'id', tokenize = 'unicode61'
);
CREATE TRIGGER passages_fts_insert AFTER INSERT ON passages BEGIN
    INSERT INTO passages_fts (rowid, tokens) VALUES (new.id, new.tokens);
END;
CREATE TRIGGER passages_fts_delete AFTER DELETE ON passages BEGIN
    INSERT INTO passages_fts (passages_fts, rowid, tokens) VALUES ('delete', old.id, old.tokens);
END;
"#;

/// Why an existing file cannot serve as this build's index, if it cannot.
pub(super) fn identity_problem(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let app: i64 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    if app != KNOWLEDGE_APPLICATION_ID && (app != 0 || tables != 0) {
        return Ok(Some(format!(
            "application_id is {app:#x}, not a Hearth knowledge index"
        )));
    }
    if version > KNOWLEDGE_SCHEMA_VERSION {
        return Ok(Some(format!(
            "schema version {version} is newer than {KNOWLEDGE_SCHEMA_VERSION}"
        )));
    }
    if app == KNOWLEDGE_APPLICATION_ID && version == 0 {
        return Ok(Some(
            "marked as an index but has no schema version".to_owned(),
        ));
    }
    let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
    if check != "ok" {
        return Ok(Some(format!("integrity check failed: {check}")));
    }
    Ok(None)
}

/// Creates the schema in a new, empty file, together with its identity, in one transaction.
pub(super) fn create_if_new(conn: &mut Connection) -> rusqlite::Result<()> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version == KNOWLEDGE_SCHEMA_VERSION {
        return Ok(());
    }
    let tx = conn.transaction()?;
    tx.execute_batch(V1)?;
    tx.pragma_update(None, "application_id", KNOWLEDGE_APPLICATION_ID)?;
    tx.pragma_update(None, "user_version", KNOWLEDGE_SCHEMA_VERSION)?;
    tx.commit()
}
