//! The schema of `memory.db` and its migrations. Each migration is a numbered SQL script applied
//! in its own `BEGIN IMMEDIATE` transaction together with its `schema_version` row, so a crash
//! or an error leaves the database at the previous version, never between two.
//!
//! Migrations are append-only: a released script is never edited, a change is a new script.
//! `memory/DESIGN.md` describes every table and column.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::error::{SqlContext, StoreError};

/// `PRAGMA application_id` of a Hearth memory store: the bytes `HRTH` (0x48525448), written in
/// the database header at offset 68 so `file(1)` and the store itself can tell the file apart
/// from other SQLite databases.
pub const STORE_APPLICATION_ID: i32 = 0x4852_5448;

/// The schema version this build writes and reads.
pub const STORE_SCHEMA_VERSION: u32 = 11;

/// One numbered migration.
#[derive(Clone, Copy, Debug)]
pub(super) struct Migration {
    pub version: u32,
    pub name: &'static str,
    pub sql: &'static str,
    /// A rewrite of rows that SQL alone cannot compute, run after `sql` in the same
    /// transaction.
    pub rewrite: Option<fn(&Connection) -> rusqlite::Result<()>>,
}

/// Every migration, in order; `MIGRATIONS[i].version == i + 1`.
pub(super) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "core tables: events, cold, journal, frames",
        sql: V1_CORE,
        rewrite: None,
    },
    Migration {
        version: 2,
        name: "full-text index over cold tokens",
        sql: V2_COLD_FTS,
        rewrite: None,
    },
    Migration {
        version: 3,
        name: "cold vectors of side dense spaces",
        sql: V3_COLD_SIDE_VECTORS,
        rewrite: None,
    },
    Migration {
        version: 4,
        name: "side vectors in a rowid table",
        sql: V4_SIDE_VECTORS_ROWID,
        rewrite: None,
    },
    Migration {
        version: 5,
        name: "trust of journaled inputs",
        sql: V5_JOURNAL_TRUST,
        rewrite: None,
    },
    Migration {
        version: 6,
        name: "count of cold entries",
        sql: V6_COLD_COUNT,
        rewrite: None,
    },
    Migration {
        version: 7,
        name: "cold index deletes for good",
        sql: V7_COLD_FTS_SECURE_DELETE,
        rewrite: None,
    },
    Migration {
        version: 8,
        name: "cold entries by turn",
        sql: V8_COLD_BY_TURN,
        rewrite: None,
    },
    Migration {
        version: 9,
        name: "what memory showed a window event's reply",
        sql: V9_EVENTS_SHOWN,
        rewrite: None,
    },
    Migration {
        version: 10,
        name: "turns to forget once answered",
        sql: V10_JOURNAL_FORGET_WHEN_ANSWERED,
        rewrite: None,
    },
    Migration {
        version: 11,
        name: "window token estimates by words and bytes",
        sql: "",
        rewrite: Some(super::events::reestimate_tokens),
    },
];

const V1_CORE: &str = r#"
PRAGMA application_id = 1213355080;

CREATE TABLE events (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id     TEXT    NOT NULL DEFAULT '',
    timestamp_ms INTEGER NOT NULL,
    source       TEXT    NOT NULL,
    input        TEXT    NOT NULL,
    response     TEXT    NOT NULL DEFAULT '',
    tools_used   TEXT    NOT NULL DEFAULT '[]'
        CHECK (CASE WHEN json_valid(tools_used) THEN json_type(tools_used) = 'array' ELSE 0 END),
    tool_results TEXT    NOT NULL DEFAULT '[]'
        CHECK (CASE WHEN json_valid(tool_results) THEN json_type(tool_results) = 'array' ELSE 0 END),
    dense        BLOB    CHECK (dense IS NULL OR length(dense) % 4 = 0),
    dense_fp     TEXT,
    sparse       TEXT    CHECK (sparse IS NULL OR json_valid(sparse)),
    tokens       INTEGER NOT NULL DEFAULT 0 CHECK (tokens >= 0),
    CHECK ((dense IS NULL) = (dense_fp IS NULL))
) STRICT;
CREATE INDEX events_by_time ON events (timestamp_ms, id);

CREATE TABLE cold (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    event          TEXT    NOT NULL
        CHECK (CASE WHEN json_valid(event) THEN json_type(event) = 'object' ELSE 0 END),
    timestamp_ms   INTEGER NOT NULL,
    source         TEXT    NOT NULL,
    text           TEXT    NOT NULL,
    tokens         TEXT    NOT NULL,
    dense          BLOB    CHECK (dense IS NULL OR length(dense) % 4 = 0),
    dense_fp       TEXT,
    access_count   INTEGER NOT NULL DEFAULT 0 CHECK (access_count >= 0),
    last_access_ms INTEGER NOT NULL,
    created_ms     INTEGER NOT NULL,
    archived_from  TEXT    NOT NULL,
    CHECK ((dense IS NULL) = (dense_fp IS NULL))
) STRICT;
CREATE INDEX cold_by_last_access ON cold (last_access_ms);
CREATE INDEX cold_by_fingerprint ON cold (dense_fp, id) WHERE dense_fp IS NOT NULL;

CREATE TABLE journal (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id  TEXT    NOT NULL UNIQUE,
    source      TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    payload     TEXT    NOT NULL CHECK (json_valid(payload)),
    accepted_ms INTEGER NOT NULL,
    reply       TEXT    CHECK (reply IS NULL OR json_valid(reply)),
    replied_ms  INTEGER,
    CHECK ((reply IS NULL) = (replied_ms IS NULL))
) STRICT;
CREATE INDEX journal_unreplied ON journal (seq) WHERE reply IS NULL;

CREATE TABLE frames (
    task_id       INTEGER PRIMARY KEY CHECK (task_id >= 0),
    request_id    TEXT    NOT NULL,
    level         INTEGER NOT NULL CHECK (level BETWEEN 0 AND 255),
    preempt_count INTEGER NOT NULL CHECK (preempt_count BETWEEN 0 AND 4294967295),
    frame         TEXT    NOT NULL CHECK (json_valid(frame)),
    stack_pos     INTEGER NOT NULL CHECK (stack_pos BETWEEN 0 AND 4294967295),
    saved_ms      INTEGER NOT NULL
) STRICT;
"#;

// External-content FTS5 table over `cold.tokens`: the tokens are stored once (in `cold`), the
// index keeps only postings. The triggers are the only writers of the index; `rebuild` indexes
// the rows written by a version-1 store.
const V2_COLD_FTS: &str = r#"
CREATE VIRTUAL TABLE cold_fts USING fts5 (
    tokens,
    content = 'cold',
    content_rowid = 'id',
    tokenize = 'unicode61'
);
CREATE TRIGGER cold_fts_insert AFTER INSERT ON cold BEGIN
    INSERT INTO cold_fts (rowid, tokens) VALUES (new.id, new.tokens);
END;
CREATE TRIGGER cold_fts_delete AFTER DELETE ON cold BEGIN
    INSERT INTO cold_fts (cold_fts, rowid, tokens) VALUES ('delete', old.id, old.tokens);
END;
CREATE TRIGGER cold_fts_update AFTER UPDATE OF tokens ON cold BEGIN
    INSERT INTO cold_fts (cold_fts, rowid, tokens) VALUES ('delete', old.id, old.tokens);
    INSERT INTO cold_fts (rowid, tokens) VALUES (new.id, new.tokens);
END;
INSERT INTO cold_fts (cold_fts) VALUES ('rebuild');
"#;

// Vectors of dense spaces besides the main one (`cold.dense`), one row per entry and space.
// Without rowid: the rows are looked up and scanned only by their key. The trigger is the only
// deleter, so removing a cold entry never leaves a vector behind; a trigger rather than a
// foreign key because `foreign_keys` is a per-connection setting.
const V3_COLD_SIDE_VECTORS: &str = r#"
CREATE TABLE cold_side_vectors (
    cold_id INTEGER NOT NULL,
    fp      TEXT    NOT NULL,
    dense   BLOB    NOT NULL CHECK (length(dense) % 4 = 0 AND length(dense) > 0),
    PRIMARY KEY (cold_id, fp)
) STRICT, WITHOUT ROWID;
CREATE INDEX cold_side_vectors_by_fingerprint ON cold_side_vectors (fp, cold_id);
CREATE TRIGGER cold_side_vectors_delete AFTER DELETE ON cold BEGIN
    DELETE FROM cold_side_vectors WHERE cold_id = old.id;
END;
"#;

// A row of a WITHOUT ROWID table lives in an index b-tree, whose cells hold at most ~1,000 bytes
// locally at 4 KiB pages: a 384-d vector (1,536 bytes) spilled its tail onto an overflow page of
// its own, and each vector took ~4.1 KiB of file for 1.5 KiB of data (measured with
// `examples/store_bytes.rs`). A rowid table's leaf cells hold up to ~4,000 bytes, so the
// vectors pack two per page. Same columns, same key (now a UNIQUE constraint, the upsert's
// conflict target), same index and trigger; the trigger is dropped first because it names the
// table being replaced.
const V4_SIDE_VECTORS_ROWID: &str = r#"
DROP TRIGGER cold_side_vectors_delete;
CREATE TABLE cold_side_vectors_rowid (
    id      INTEGER PRIMARY KEY,
    cold_id INTEGER NOT NULL,
    fp      TEXT    NOT NULL,
    dense   BLOB    NOT NULL CHECK (length(dense) % 4 = 0 AND length(dense) > 0),
    UNIQUE (cold_id, fp)
) STRICT;
INSERT INTO cold_side_vectors_rowid (cold_id, fp, dense)
    SELECT cold_id, fp, dense FROM cold_side_vectors ORDER BY fp, cold_id;
DROP TABLE cold_side_vectors;
ALTER TABLE cold_side_vectors_rowid RENAME TO cold_side_vectors;
CREATE INDEX cold_side_vectors_by_fingerprint ON cold_side_vectors (fp, cold_id);
CREATE TRIGGER cold_side_vectors_delete AFTER DELETE ON cold BEGIN
    DELETE FROM cold_side_vectors WHERE cold_id = old.id;
END;
"#;

// The trust the ingress gave an input travels with it across a restart, so an external L4 clamped
// to L3 is still L3 when it is resumed. Rows journaled before this migration did not record it and
// are read as external: after an upgrade an old pending input may lose a privilege, never gain one.
const V5_JOURNAL_TRUST: &str = r#"
ALTER TABLE journal ADD COLUMN trust TEXT NOT NULL DEFAULT 'external'
    CHECK (trust IN ('kernel', 'local', 'external'));
"#;

// Recall asks how many cold entries there are on every keyword query (`common_terms.rs`), and
// `count(*)` walks a whole b-tree: ~0.3 ms at 10,000 entries, growing with everything ever said.
// One row kept by the triggers is exact for every connection, a read-only reader included.
const V6_COLD_COUNT: &str = r#"
CREATE TABLE cold_count (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    entries INTEGER NOT NULL CHECK (entries >= 0)
) STRICT;
INSERT INTO cold_count (id, entries) SELECT 1, count(*) FROM cold;
CREATE TRIGGER cold_count_insert AFTER INSERT ON cold BEGIN
    UPDATE cold_count SET entries = entries + 1 WHERE id = 1;
END;
CREATE TRIGGER cold_count_delete AFTER DELETE ON cold BEGIN
    UPDATE cold_count SET entries = entries - 1 WHERE id = 1;
END;
"#;

// A forgotten fact's words are taken out of the turns that said them (`redact.rs`): the cold
// entry's new tokens replace the old in the keyword index by a 'delete' then an insert, and by
// default FTS5 only appends a delete marker, leaving the old terms readable in the index's
// segments until a merge reaches them. `secure-delete` removes them from the index at once.
// Deletes from this index happen only when a user removes or rewrites what was said, never on
// a turn's path (entries are only ever inserted there), so its extra cost is not on it.
const V7_COLD_FTS_SECURE_DELETE: &str = r#"
INSERT INTO cold_fts (cold_fts, rank) VALUES ('secure-delete', 1);
"#;

// A forget finds the rows one turn left in cold context by the turn's id inside the event's JSON
// (`redact.rs`): a scan of every event took 76 ms at 200,000 entries on the store's thread, which
// every turn waits behind. An index on that expression makes it a lookup.
const V8_COLD_BY_TURN: &str = r#"
CREATE INDEX cold_by_turn ON cold (json_extract(event, '$.id'));
"#;

// A reply may repeat a fact memory showed the model; forgetting the fact takes its value out of
// the replies of the turns it was shown in, so a window event keeps what it was shown, as its
// JSON does in cold context (`ContextEvent::shown`). Finding them in cold context read every
// entry (105 ms at 200,000 entries, `forget` bench): `cold_shown` indexes what each entry was
// shown, written beside the entry (a trigger parsing each entry's JSON cost 22 µs per entry
// archived). No entry of an older store was shown anything: there is nothing to fill.
const V9_EVENTS_SHOWN: &str = r#"
ALTER TABLE events ADD COLUMN shown TEXT NOT NULL DEFAULT '[]'
    CHECK (CASE WHEN json_valid(shown) THEN json_type(shown) = 'array' ELSE 0 END);
CREATE TABLE cold_shown (
    shown   TEXT    NOT NULL,
    cold_id INTEGER NOT NULL REFERENCES cold (id) ON DELETE CASCADE,
    PRIMARY KEY (shown, cold_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX cold_shown_by_entry ON cold_shown (cold_id);
"#;

// A person may take back a turn while it is still being answered ("my PIN is 4711 — no, don't
// keep that"). Forgetting it then would not last: the reply, written when the turn ends, brings
// its words back. The journal row marks it instead, in the same transaction as the request, and
// the turn is forgotten in the group that journals its reply — after a crash too, since the mark
// is durable and the input runs again. Only rows still owing a reply are ever marked.
const V10_JOURNAL_FORGET_WHEN_ANSWERED: &str = r#"
ALTER TABLE journal ADD COLUMN forget_when_answered INTEGER NOT NULL DEFAULT 0
    CHECK (forget_when_answered IN (0, 1));
CREATE INDEX journal_to_forget ON journal (seq) WHERE forget_when_answered = 1;
"#;

const VERSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_version (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_ms INTEGER NOT NULL
) STRICT";

/// The applied schema version: `None` when the file has no `schema_version` table.
pub(super) fn read_version(
    conn: &Connection,
    op: &'static str,
    path: &Path,
) -> Result<Option<u32>, StoreError> {
    let has_table: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version')",
            [],
            |r| r.get(0),
        )
        .ctx(op, path)?;
    if !has_table {
        return Ok(None);
    }
    let v: Option<i64> = conn
        .query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0))
        .ctx(op, path)?;
    let v = v.unwrap_or(0);
    u32::try_from(v)
        .map(Some)
        .map_err(|_| StoreError::data(op, path, format!("schema version {v} out of range")))
}

/// Refuses a SQLite file that belongs to something else: another application id, or tables
/// without a `schema_version`. An empty database (a new file) passes.
pub(super) fn check_identity(
    conn: &Connection,
    op: &'static str,
    path: &Path,
) -> Result<Option<u32>, StoreError> {
    let app_id: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .ctx(op, path)?;
    if app_id != 0 && app_id != STORE_APPLICATION_ID {
        return Err(StoreError::Foreign {
            op,
            path: path.to_path_buf(),
            detail: format!("application_id {app_id:#010x}"),
        });
    }
    let version = read_version(conn, op, path)?;
    if version.is_none() {
        let objects: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .ctx(op, path)?;
        if objects > 0 {
            return Err(StoreError::Foreign {
                op,
                path: path.to_path_buf(),
                detail: format!("{objects} schema objects and no schema_version table"),
            });
        }
    }
    Ok(version)
}

/// The schema version of a file this build can open (0 for a new one): foreign files and files
/// of a newer build are refused, untouched.
pub(super) fn known_version(
    conn: &Connection,
    op: &'static str,
    path: &Path,
) -> Result<u32, StoreError> {
    let found = check_identity(conn, op, path)?.unwrap_or(0);
    if found > STORE_SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            op,
            path: path.to_path_buf(),
            found,
            known: STORE_SCHEMA_VERSION,
        });
    }
    Ok(found)
}

/// Applies every migration above the current version, each in its own transaction. Returns the
/// version reached. A database newer than the last known migration is refused untouched.
pub(super) fn migrate(
    conn: &mut Connection,
    path: &Path,
    migrations: &[Migration],
) -> Result<u32, StoreError> {
    const OP: &str = "migrate";
    let known = migrations.last().map_or(0, |m| m.version);
    let found = read_version(conn, OP, path)?.unwrap_or(0);
    if found > known {
        return Err(StoreError::TooNew {
            op: OP,
            path: path.to_path_buf(),
            found,
            known,
        });
    }
    let mut version = found;
    for m in migrations.iter().filter(|m| m.version > found) {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .ctx(OP, path)?;
        tx.execute_batch(VERSION_TABLE).ctx(OP, path)?;
        // Re-read under the write lock: another writer may have migrated meanwhile.
        let now: Option<i64> = tx
            .query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0))
            .optional()
            .ctx(OP, path)?
            .flatten();
        if now.unwrap_or(0) >= i64::from(m.version) {
            version = m.version;
            continue;
        }
        // A failure names the migration, unless it is one the caller tells apart (a full disk).
        let named = |e: rusqlite::Error| match StoreError::sql(OP, path, e) {
            StoreError::Sqlite { op, path, detail } => StoreError::Sqlite {
                op,
                path,
                detail: format!("migration {} ({}): {detail}", m.version, m.name),
            },
            other => other,
        };
        tx.execute_batch(m.sql).map_err(named)?;
        if let Some(rewrite) = m.rewrite {
            rewrite(&tx).map_err(named)?;
        }
        tx.execute(
            "INSERT INTO schema_version (version, name, applied_ms) VALUES (?1, ?2, ?3)",
            params![m.version, m.name, hearth_engine::now_ms()],
        )
        .ctx(OP, path)?;
        tx.commit().ctx(OP, path)?;
        tracing::info!(path = %path.display(), version = m.version, name = m.name, "memory store migrated");
        version = m.version;
    }
    Ok(version)
}
