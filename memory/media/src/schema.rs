//! The media store's SQLite schema and its migrations (documented byte for byte in
//! `memory/media/DESIGN.md`). `PRAGMA application_id` marks the file as a Hearth media store
//! and `PRAGMA user_version` is the schema version, so a foreign or newer file is refused
//! before anything writes to it.

use std::path::Path;

use rusqlite::{Connection, ErrorCode};

use crate::MediaError;
use crate::error::SqlContext;

/// `application_id` of a Hearth media store file ("HMED").
pub const MEDIA_APPLICATION_ID: i64 = 0x484d_4544;
/// The schema version this build writes.
pub const MEDIA_SCHEMA_VERSION: i64 = 1;

/// Version 1: one row per blob, with its (optional) vector in the same row, since an item has
/// at most one vector at a time: the one of the current embedding space.
const V1: &str = r#"
CREATE TABLE media (
    digest       TEXT    PRIMARY KEY
                 CHECK (length(digest) = 64 AND digest NOT GLOB '*[^0-9a-f]*'),
    kind         TEXT    NOT NULL CHECK (kind IN ('image', 'audio', 'video', 'other')),
    mime         TEXT    NOT NULL,
    bytes        INTEGER NOT NULL CHECK (bytes >= 1),
    width        INTEGER CHECK (width IS NULL OR width >= 1),
    height       INTEGER CHECK (height IS NULL OR height >= 1),
    description  TEXT    NOT NULL,
    described_by TEXT    NOT NULL,
    created_ms   INTEGER NOT NULL,
    last_seen_ms INTEGER NOT NULL CHECK (last_seen_ms >= created_ms),
    vec_model    TEXT    CHECK (vec_model IS NULL OR vec_model <> ''),
    vec_dim      INTEGER CHECK (vec_dim IS NULL OR vec_dim >= 1),
    vector       BLOB,
    CHECK ((vec_model IS NULL) = (vector IS NULL) AND (vec_model IS NULL) = (vec_dim IS NULL)),
    CHECK (vector IS NULL OR length(vector) = 4 * vec_dim)
) STRICT, WITHOUT ROWID;
CREATE INDEX media_by_vec_model ON media (vec_model) WHERE vec_model IS NOT NULL;
"#;

/// Schema steps: entry `i` takes `user_version` from `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[V1];

/// Checks the file is a Hearth media store (or new and empty) no newer than this build, before
/// anything writes to it; returns its schema version.
pub(crate) fn check_identity(conn: &Connection, path: &Path) -> Result<i64, MediaError> {
    const OP: &str = "open";
    let foreign = |reason: String| MediaError::Foreign {
        path: path.to_path_buf(),
        reason,
    };
    // The first read of the header is where a file that is not SQLite at all shows up.
    let app: i64 = match conn.query_row("PRAGMA application_id", [], |r| r.get(0)) {
        Ok(app) => app,
        Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == ErrorCode::NotADatabase => {
            return Err(foreign("not an SQLite database".into()));
        }
        Err(e) => return Err(e).ctx(OP, path),
    };
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .ctx(OP, path)?;
    let objects: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .ctx(OP, path)?;
    if app != MEDIA_APPLICATION_ID && (app != 0 || objects != 0 || version != 0) {
        return Err(foreign(format!(
            "application_id is {app:#x}, not a Hearth media store ({MEDIA_APPLICATION_ID:#x})"
        )));
    }
    if version > MEDIA_SCHEMA_VERSION {
        return Err(foreign(format!(
            "schema version {version} is newer than {MEDIA_SCHEMA_VERSION}"
        )));
    }
    Ok(version)
}

/// Applies the migrations after `version`, each in its own transaction with its version bump.
pub(crate) fn migrate(conn: &mut Connection, path: &Path, version: i64) -> Result<(), MediaError> {
    const OP: &str = "migrate";
    let done = usize::try_from(version).unwrap_or(0);
    for (step, sql) in MIGRATIONS.iter().enumerate().skip(done) {
        let tx = conn.transaction().ctx(OP, path)?;
        tx.execute_batch(sql).ctx(OP, path)?;
        if step == 0 {
            tx.pragma_update(None, "application_id", MEDIA_APPLICATION_ID)
                .ctx(OP, path)?;
        }
        tx.pragma_update(None, "user_version", step as i64 + 1)
            .ctx(OP, path)?;
        tx.commit().ctx(OP, path)?;
    }
    Ok(())
}
