//! How every Hearth SQLite connection keeps its prepared statements: parsed once per
//! connection, never again per run.
//!
//! Two things made SQLite parse a cached statement again. rusqlite keeps 16 statements, fewer
//! than one turn runs on the memory and graph connections, so its LRU evicted statements a turn
//! used again moments later (16 % of the store thread went to the parser); the cache now holds
//! [`STATEMENT_CACHE_CAPACITY`]. And SQLite re-plans a statement whose plan it let a bound
//! value shape, on the first run after that value may have changed: a bound `LIMIT ?`, and any
//! `col = ?1 … ORDER BY` (the planner compares the parameter with the ORDER BY terms). rusqlite
//! clears a cached statement's bindings when it goes back into the cache, which SQLite counts
//! as a change, so those statements were parsed again on every single run — measured with
//! `Statement::get_status(RePrepare)`: the graph's scene-feature trim and the FTS5 internals
//! behind every keyword lookup, each run. The query planner stability guarantee
//! (`SQLITE_DBCONFIG_ENABLE_QPSG`) stops bound values from shaping plans at all. Nothing is lost:
//! Hearth's files carry no `ANALYZE` statistics and every query is indexed, so the plan chosen
//! without the values is the plan chosen with them.
//!
//! Bound limits are still written `LIMIT +?N`, which the planner never reads as a hint either
//! way, so a connection opened without [`keep_statements`] does not re-plan on them.

use rusqlite::Connection;
use rusqlite::config::DbConfig;

/// Prepared statements a connection keeps, for every Hearth SQLite file (the memory store,
/// the graph, the knowledge index, the media store): each store's every statement, so one is
/// parsed once per connection.
pub const STATEMENT_CACHE_CAPACITY: usize = 256;

/// Sets `conn` up to keep its prepared statements (see the module docs): a cache of
/// [`STATEMENT_CACHE_CAPACITY`] and plans that never depend on bound values.
pub fn keep_statements(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE_CAPACITY);
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::StatementStatus;

    /// A cached `= ?1 … ORDER BY` read run ten times, through rusqlite's cache: how often
    /// SQLite parsed it again.
    fn reparses(conn: &Connection) -> i32 {
        conn.execute_batch(
            "CREATE TABLE f (k TEXT NOT NULL, v TEXT NOT NULL, hits INTEGER NOT NULL, \
             PRIMARY KEY (k, v)) WITHOUT ROWID; \
             INSERT INTO f VALUES ('a', 'x', 1), ('a', 'y', 2), ('b', 'z', 1);",
        )
        .expect("schema");
        const SQL: &str = "SELECT v FROM f WHERE k = ?1 ORDER BY hits DESC LIMIT 5";
        for _ in 0..10 {
            let mut stmt = conn.prepare_cached(SQL).expect("prepare");
            let rows: Vec<String> = stmt
                .query_map(["a"], |r| r.get(0))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows");
            assert_eq!(rows, ["y", "x"]);
        }
        let stmt = conn.prepare_cached(SQL).expect("cached");
        stmt.get_status(StatementStatus::RePrepare)
    }

    #[test]
    fn a_cached_statement_is_parsed_once_however_often_it_runs() {
        let kept = Connection::open_in_memory().expect("open");
        keep_statements(&kept).expect("configure");
        assert_eq!(reparses(&kept), 0);
        // Without the guarantee the same statement is parsed again on every run after the
        // first: what this module exists to prevent.
        let plain = Connection::open_in_memory().expect("open");
        assert_eq!(reparses(&plain), 9);
    }
}
