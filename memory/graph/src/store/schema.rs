//! The graph's SQLite schema and its migrations (documented byte for byte in
//! `memory/graph/DESIGN.md`). `PRAGMA user_version` is the schema version and
//! `PRAGMA application_id` marks the file as a Hearth graph, so a foreign database is refused
//! before anything writes to it.

use std::path::Path;

use rusqlite::Connection;

use crate::GraphError;
use crate::error::SqlContext;

/// `application_id` of a Hearth graph file ("HGL3").
pub const GRAPH_APPLICATION_ID: i64 = 0x4847_4c33;
/// The schema version this build writes.
pub const GRAPH_SCHEMA_VERSION: i64 = 6;

/// Predicates known from the start. Single-valued ones hold one value per subject at a time:
/// a new value closes the old one instead of standing beside it.
pub(crate) const SEED_PREDICATES: &[(&str, bool, &str)] = &[
    ("name", true, "name called 名字 叫"),
    ("lives_in", true, "lives live living home moved 住在 住 搬"),
    (
        "works_at",
        true,
        "works work company employer 工作 上班 公司",
    ),
    ("job", true, "job work as 工作 职业"),
    ("age", true, "age years old 岁 年龄"),
    ("from", true, "from comes 来自"),
    ("studies_at", true, "studies study at 读书 上学"),
    ("married_to", true, "married 结婚"),
    ("likes", false, "likes like love enjoy 喜欢 爱好"),
    ("dislikes", false, "dislikes hate 讨厌 不喜欢"),
    ("has", false, "has have 拥有"),
    ("owns", false, "owns own 拥有"),
    ("knows", false, "knows know 认识"),
    ("speaks", false, "speaks speak language 会说 语言"),
    ("visited", false, "visited visit 去过"),
    ("related_to", false, "related 关系"),
];

const V1: &str = r#"
CREATE TABLE entities (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    norm       TEXT    NOT NULL UNIQUE,
    kind       TEXT    NOT NULL,
    mentions   INTEGER NOT NULL CHECK (mentions >= 1),
    tokens     TEXT    NOT NULL,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
) STRICT;

CREATE TABLE aliases (
    norm      TEXT    PRIMARY KEY,
    alias     TEXT    NOT NULL,
    entity_id INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE
) STRICT;
CREATE INDEX aliases_entity ON aliases (entity_id);

CREATE TABLE predicates (
    name          TEXT    PRIMARY KEY,
    single_valued INTEGER NOT NULL CHECK (single_valued IN (0, 1)),
    words         TEXT    NOT NULL
) STRICT;

CREATE TABLE relations (
    id            INTEGER PRIMARY KEY,
    subject_id    INTEGER NOT NULL REFERENCES entities (id),
    predicate     TEXT    NOT NULL REFERENCES predicates (name),
    object_id     INTEGER NOT NULL REFERENCES entities (id),
    single_valued INTEGER NOT NULL CHECK (single_valued IN (0, 1)),
    fact_key      TEXT    NOT NULL,
    confidence    REAL    NOT NULL CHECK (confidence > 0 AND confidence <= 1),
    mentions      INTEGER NOT NULL CHECK (mentions >= 1),
    valid_from_ms INTEGER NOT NULL,
    valid_to_ms   INTEGER,
    recorded_ms   INTEGER NOT NULL,
    superseded_ms INTEGER,
    superseded_by INTEGER,
    tokens        TEXT    NOT NULL,
    CHECK (valid_to_ms IS NULL OR valid_to_ms >= valid_from_ms),
    CHECK ((superseded_ms IS NULL) = (superseded_by IS NULL))
) STRICT;
-- The invariant "no duplicate active relation", held by SQLite itself.
CREATE UNIQUE INDEX relations_open ON relations (subject_id, predicate, object_id)
    WHERE superseded_ms IS NULL AND valid_to_ms IS NULL;
CREATE INDEX relations_by_subject ON relations (subject_id);
CREATE INDEX relations_by_object ON relations (object_id);
CREATE INDEX relations_by_slot ON relations (subject_id, predicate);

CREATE TABLE sentences (
    id   INTEGER PRIMARY KEY,
    text TEXT    NOT NULL UNIQUE
) STRICT;

CREATE TABLE provenance (
    id          INTEGER PRIMARY KEY,
    relation_id INTEGER NOT NULL REFERENCES relations (id) ON DELETE CASCADE,
    role        TEXT    NOT NULL CHECK (role IN ('asserted', 'ended', 'corrected')),
    sentence_id INTEGER NOT NULL REFERENCES sentences (id),
    cold_item   INTEGER,
    turn_id     TEXT    NOT NULL,
    said_ms     INTEGER NOT NULL,
    UNIQUE (relation_id, role, cold_item, sentence_id)
) STRICT;
CREATE INDEX provenance_relation ON provenance (relation_id);
CREATE INDEX provenance_cold ON provenance (cold_item);
CREATE INDEX provenance_sentence ON provenance (sentence_id);

CREATE TABLE events (
    id          INTEGER PRIMARY KEY,
    subject_id  INTEGER NOT NULL REFERENCES entities (id),
    what        TEXT    NOT NULL,
    event_key   TEXT    NOT NULL,
    relation_id INTEGER REFERENCES relations (id) ON DELETE SET NULL,
    start_ms    INTEGER NOT NULL,
    end_ms      INTEGER NOT NULL,
    phrase      TEXT    NOT NULL,
    sentence_id INTEGER NOT NULL REFERENCES sentences (id),
    cold_item   INTEGER,
    turn_id     TEXT    NOT NULL,
    said_ms     INTEGER NOT NULL,
    recorded_ms INTEGER NOT NULL,
    tokens      TEXT    NOT NULL,
    CHECK (start_ms < end_ms),
    UNIQUE (event_key, cold_item)
) STRICT;
CREATE INDEX events_when ON events (start_ms);
CREATE INDEX events_subject ON events (subject_id);
CREATE INDEX events_cold ON events (cold_item);
CREATE INDEX events_sentence ON events (sentence_id);
CREATE INDEX events_relation ON events (relation_id);

CREATE TABLE tombstones (
    cold_item    INTEGER NOT NULL,
    fact_key     TEXT    NOT NULL,
    forgotten_ms INTEGER NOT NULL,
    PRIMARY KEY (cold_item, fact_key)
) STRICT, WITHOUT ROWID;

CREATE TABLE distilled (
    cold_item INTEGER PRIMARY KEY,
    state     TEXT    NOT NULL CHECK (state IN ('done', 'empty')),
    attempts  INTEGER NOT NULL CHECK (attempts >= 1),
    facts     INTEGER NOT NULL CHECK (facts >= 0),
    last_ms   INTEGER NOT NULL,
    retry_ms  INTEGER,
    CHECK ((state = 'empty') = (retry_ms IS NOT NULL))
) STRICT;
CREATE INDEX distilled_retry ON distilled (retry_ms) WHERE state = 'empty';

CREATE TABLE relation_vectors (
    relation_id INTEGER PRIMARY KEY REFERENCES relations (id) ON DELETE CASCADE,
    fingerprint TEXT    NOT NULL,
    vector      BLOB    NOT NULL
) STRICT;
CREATE INDEX relation_vectors_fp ON relation_vectors (fingerprint);

CREATE TABLE merge_rejections (
    pair        TEXT    PRIMARY KEY,
    rounds_left INTEGER NOT NULL CHECK (rounds_left >= 1)
) STRICT, WITHOUT ROWID;

CREATE TABLE reviewed (
    relation_id INTEGER PRIMARY KEY REFERENCES relations (id) ON DELETE CASCADE,
    reviewed_ms INTEGER NOT NULL
) STRICT;

-- Document frequencies, so recall can leave out terms too common to tell facts apart.
CREATE VIRTUAL TABLE relation_vocab USING fts5vocab (relation_fts, 'row');
CREATE VIRTUAL TABLE entity_vocab USING fts5vocab (entity_fts, 'row');
CREATE VIRTUAL TABLE event_vocab USING fts5vocab (event_fts, 'row');
"#;

/// An external-content FTS5 index `{fts}` over `{table}.tokens`, kept by triggers that are its
/// only writers (`update` only where the table's tokens change in place).
fn fts_index(fts: &str, table: &str, update: bool) -> String {
    let mut sql = format!(
        "CREATE VIRTUAL TABLE {fts} USING fts5 (
    tokens, content = '{table}', content_rowid = 'id', tokenize = 'unicode61'
);
CREATE TRIGGER {fts}_insert AFTER INSERT ON {table} BEGIN
    INSERT INTO {fts} (rowid, tokens) VALUES (new.id, new.tokens);
END;
CREATE TRIGGER {fts}_delete AFTER DELETE ON {table} BEGIN
    INSERT INTO {fts} ({fts}, rowid, tokens) VALUES ('delete', old.id, old.tokens);
END;
"
    );
    if update {
        sql.push_str(&format!(
            "CREATE TRIGGER {fts}_update AFTER UPDATE OF tokens ON {table} BEGIN
    INSERT INTO {fts} ({fts}, rowid, tokens) VALUES ('delete', old.id, old.tokens);
    INSERT INTO {fts} (rowid, tokens) VALUES (new.id, new.tokens);
END;
"
        ));
    }
    sql
}

/// Version 2: the model distiller's record, apart from the rule distiller's cursor (an item
/// the rules did is still new to the model).
const V2: &str = r#"
CREATE TABLE model_distilled (
    cold_item INTEGER PRIMARY KEY,
    state     TEXT    NOT NULL CHECK (state IN ('done', 'empty')),
    attempts  INTEGER NOT NULL CHECK (attempts >= 1),
    last_ms   INTEGER NOT NULL,
    retry_ms  INTEGER,
    CHECK ((state = 'empty') = (retry_ms IS NOT NULL))
) STRICT;
"#;

/// Version 3: tombstones keep a digest of the forgotten fact's key, not the key (which spells
/// the fact). No table changes; [`migrate`] rewrites the rows.
const V3: &str = "";

/// Version 4: scenes. A scene is a named situation (declared by the caller, or emergent from
/// recurring situation fingerprints); refs tie it to relations and entities with a weight.
/// Refs point at their targets with `ON DELETE CASCADE`, so deleting a fact or an entity can
/// never leave a ref behind.
const V4: &str = r#"
CREATE TABLE scenes (
    key        TEXT    PRIMARY KEY,
    origin     TEXT    NOT NULL CHECK (origin IN ('declared', 'emergent')),
    strength   INTEGER NOT NULL CHECK (strength >= 1),
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX scenes_origin ON scenes (origin);

CREATE TABLE scene_features (
    scene_key TEXT NOT NULL REFERENCES scenes (key) ON DELETE CASCADE,
    feature   TEXT NOT NULL,
    weight    REAL NOT NULL CHECK (weight > 0),
    hits      INTEGER NOT NULL DEFAULT 1 CHECK (hits >= 1),
    PRIMARY KEY (scene_key, feature)
) STRICT, WITHOUT ROWID;

CREATE TABLE scene_relation_refs (
    scene_key   TEXT    NOT NULL REFERENCES scenes (key) ON DELETE CASCADE,
    relation_id INTEGER NOT NULL REFERENCES relations (id) ON DELETE CASCADE,
    weight      REAL    NOT NULL CHECK (weight > 0),
    created_ms  INTEGER NOT NULL,
    decayed_ms  INTEGER NOT NULL,
    PRIMARY KEY (scene_key, relation_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX scene_relation_refs_relation ON scene_relation_refs (relation_id);

CREATE TABLE scene_entity_refs (
    scene_key  TEXT    NOT NULL REFERENCES scenes (key) ON DELETE CASCADE,
    entity_id  INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    weight     REAL    NOT NULL CHECK (weight > 0),
    created_ms INTEGER NOT NULL,
    decayed_ms INTEGER NOT NULL,
    PRIMARY KEY (scene_key, entity_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX scene_entity_refs_entity ON scene_entity_refs (entity_id);

CREATE TABLE scene_evidence (
    label      TEXT    PRIMARY KEY,
    count      INTEGER NOT NULL CHECK (count >= 1),
    updated_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX scene_evidence_updated ON scene_evidence (updated_ms);

CREATE TABLE turn_scenes (
    id       INTEGER PRIMARY KEY,
    turn_id  TEXT    NOT NULL UNIQUE,
    keys     TEXT    NOT NULL,
    noted_ms INTEGER NOT NULL
) STRICT;
"#;

/// Version 5: the words of forgotten facts still to be taken out of what the memory store keeps
/// of the turns they were said in. A row is written in the forget's transaction and deleted
/// once the memory store's redaction is committed, so a crash between the two commits leaves
/// the row, and the redaction (which does nothing twice) runs again.
const V5: &str = r#"
CREATE TABLE unsaid (
    id           INTEGER PRIMARY KEY,
    sentence     TEXT    NOT NULL CHECK (sentence <> ''),
    turn_id      TEXT    NOT NULL,
    cold_item    INTEGER,
    forgotten_ms INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX unsaid_once ON unsaid (sentence, turn_id, ifnull(cold_item, -1));
"#;

/// Version 6: a forgotten fact's value, noted beside its sentence, taken out as a whole word in
/// any case: from the turn's replies, which may repeat it in the agent's words ("Lovely, Porto is
/// a great city", `echo` = 1), or from the whole turn when the fact was told in other words than
/// the turn's (committed by the model, `echo` = 2).
const V6: &str = r#"
ALTER TABLE unsaid ADD COLUMN echo INTEGER NOT NULL DEFAULT 0 CHECK (echo IN (0, 1, 2));
DROP INDEX unsaid_once;
CREATE UNIQUE INDEX unsaid_once ON unsaid (sentence, turn_id, ifnull(cold_item, -1), echo);
"#;

/// Schema steps: entry `i` takes `user_version` from `i` to `i + 1`.
fn migrations() -> Vec<String> {
    let v1_fts = [
        fts_index("relation_fts", "relations", true),
        fts_index("entity_fts", "entities", true),
        fts_index("event_fts", "events", false),
    ]
    .concat();
    // The vocabulary tables read the indexes, so they come last.
    let (tables, vocab) = V1.split_at(V1.find("-- Document frequencies").unwrap_or(V1.len()));
    vec![
        format!("{tables}{v1_fts}{vocab}"),
        V2.to_owned(),
        V3.to_owned(),
        V4.to_owned(),
        V5.to_owned(),
        V6.to_owned(),
    ]
}

/// Checks the file is a Hearth graph (or new and empty) no newer than this build, before
/// anything writes to it; returns its schema version.
pub(crate) fn check_identity(conn: &Connection, path: &Path) -> Result<i64, GraphError> {
    const OP: &str = "open";
    let app: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .ctx(OP, path)?;
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .ctx(OP, path)?;
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .ctx(OP, path)?;
    let foreign = |reason: String| GraphError::Foreign {
        path: path.to_path_buf(),
        reason,
    };
    if app != GRAPH_APPLICATION_ID && (app != 0 || tables != 0) {
        return Err(foreign(format!(
            "application_id is {app:#x}, not a Hearth graph"
        )));
    }
    if version > GRAPH_SCHEMA_VERSION {
        return Err(foreign(format!(
            "schema version {version} is newer than {GRAPH_SCHEMA_VERSION}"
        )));
    }
    Ok(version)
}

/// Applies the migrations after `version`, each in its own transaction together with its
/// version bump.
pub(crate) fn migrate(conn: &mut Connection, path: &Path, version: i64) -> Result<(), GraphError> {
    const OP: &str = "migrate";
    for (step, sql) in migrations().iter().enumerate().skip(version as usize) {
        let tx = conn.transaction().ctx(OP, path)?;
        tx.execute_batch(sql).ctx(OP, path)?;
        if step == 0 {
            let mut seed = tx
                .prepare("INSERT INTO predicates (name, single_valued, words) VALUES (?1, ?2, ?3)")
                .ctx(OP, path)?;
            for &(name, single, words) in SEED_PREDICATES {
                seed.execute(rusqlite::params![name, single, words])
                    .ctx(OP, path)?;
            }
            drop(seed);
            tx.pragma_update(None, "application_id", GRAPH_APPLICATION_ID)
                .ctx(OP, path)?;
        }
        if step == 2 {
            digest_tombstones(&tx, path)?;
        }
        tx.pragma_update(None, "user_version", step as i64 + 1)
            .ctx(OP, path)?;
        tx.commit().ctx(OP, path)?;
    }
    if version < 3 {
        // The WAL still holds the pages with the plain keys the migration replaced.
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .ctx(OP, path)?;
    }
    Ok(())
}

/// Replaces every tombstone's plain fact key with its digest (version 3).
fn digest_tombstones(tx: &rusqlite::Transaction<'_>, path: &Path) -> Result<(), GraphError> {
    const OP: &str = "migrate_tombstones";
    let rows: Vec<(i64, String)> = tx
        .prepare("SELECT cold_item, fact_key FROM tombstones")
        .ctx(OP, path)?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(OP, path)?
        .collect::<Result<_, _>>()
        .ctx(OP, path)?;
    for (cold_item, key) in rows {
        tx.execute(
            "UPDATE tombstones SET fact_key = ?3 WHERE cold_item = ?1 AND fact_key = ?2",
            rusqlite::params![cold_item, key, crate::name::tombstone_key(&key)],
        )
        .ctx(OP, path)?;
    }
    Ok(())
}
