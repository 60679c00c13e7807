//! Shared fixtures: a graph in a temporary directory, cold items, and a read-only look at the
//! file for checking invariants the public API does not expose.

use std::path::Path;

use hearth_graph::{ColdItem, Fact, FactMode, FactSource, GraphStore};
use rusqlite::{Connection, OpenFlags};

pub const DAY: i64 = 86_400_000;
/// Tuesday 2024-01-02 09:00 UTC.
pub const T0: i64 = 1_704_186_000_000;

pub struct TestGraph {
    pub graph: GraphStore,
    /// Kept so the directory lives as long as the graph.
    _dir: tempfile::TempDir,
}

pub fn graph() -> TestGraph {
    let dir = tempfile::tempdir().expect("temp dir");
    let graph = GraphStore::open(dir.path().join("graph.db")).expect("open graph");
    TestGraph { graph, _dir: dir }
}

pub fn item(id: i64, said_ms: i64, text: &str) -> ColdItem {
    ColdItem {
        id,
        turn_id: format!("turn-{id}"),
        said_ms,
        text: text.to_owned(),
        utc_offset_secs: 0,
    }
}

/// A plain claim: `subject predicate object`, holding, of confidence 0.8.
pub fn fact(subject: &str, predicate: &str, object: &str) -> Fact {
    Fact {
        subject: subject.into(),
        subject_kind: "person",
        predicate: predicate.into(),
        object: object.into(),
        object_kind: "concept",
        mode: FactMode::Holds,
        confidence: 0.8,
        valid_from: None,
    }
}

/// A source told at `T0` in turn `t`, from `cold_item`.
pub fn source(cold_item: Option<i64>) -> FactSource {
    FactSource {
        cold_item,
        turn_id: "t".into(),
        said_ms: T0,
    }
}

/// Drops what schemas 4 and 5 added (the scene tables, the unsaid words), for tests that take a
/// file back to an older version as an older Hearth left it.
pub const DROP_V4: &str = "DROP TABLE unsaid; DROP TABLE scene_features; DROP TABLE scene_relation_refs; \
     DROP TABLE scene_entity_refs; DROP TABLE scene_evidence; DROP TABLE turn_scenes; \
     DROP TABLE scenes;";

pub fn peek(path: &Path) -> Connection {
    Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("read-only connection")
}

pub fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The invariants every state of the file must hold; panics naming the one broken.
pub fn assert_invariants(path: &Path) {
    let conn = peek(path);
    let checks = [
        (
            "no duplicate open relation",
            "SELECT count(*) FROM (SELECT 1 FROM relations WHERE superseded_ms IS NULL \
             AND valid_to_ms IS NULL GROUP BY subject_id, predicate, object_id HAVING count(*) > 1)",
        ),
        (
            "every relation has provenance",
            "SELECT count(*) FROM relations r WHERE NOT EXISTS \
             (SELECT 1 FROM provenance p WHERE p.relation_id = r.id)",
        ),
        (
            "a single-valued predicate holds one value per subject",
            "SELECT count(*) FROM (SELECT 1 FROM relations WHERE single_valued = 1 \
             AND superseded_ms IS NULL AND valid_to_ms IS NULL GROUP BY subject_id, predicate \
             HAVING count(*) > 1)",
        ),
        (
            "every event has a sentence",
            "SELECT count(*) FROM events e WHERE NOT EXISTS (SELECT 1 FROM sentences s WHERE s.id = e.sentence_id)",
        ),
        (
            "the keyword index matches the relations",
            "SELECT abs((SELECT count(*) FROM relation_fts_docsize) - (SELECT count(*) FROM relations))",
        ),
    ];
    for (name, sql) in checks {
        assert_eq!(count(&conn, sql), 0, "invariant broken: {name}");
    }
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity check");
    assert_eq!(ok, "ok");
}
