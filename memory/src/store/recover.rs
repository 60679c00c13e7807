//! Recovery of a damaged store by row-by-row salvage.
//!
//! The bundled SQLite has neither the recovery extension (`sqlite3_recover_*`, shipped only with
//! the `sqlite3` shell) nor the `sqlite_dbpage` table it needs, so the rows are salvaged through
//! ordinary queries: every table is read in key order from a copy of the damaged files, and when
//! a read fails on a damaged page, the key range behind it is searched for the next key a fresh
//! descent from the root can reach, so only the rows on unreadable pages are lost. The rows are
//! written into a fresh database with the current schema (the full-text index is rebuilt by its
//! triggers as the rows go in), which must pass the integrity check before it replaces the
//! damaged one. The damaged files are kept: only the work copies are ever deleted.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use rusqlite::types::Value;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, params_from_iter};

use super::error::{SqlContext, StoreError};
use super::files::{StoreFiles, copy_private, file_len, io_err, make_private, sync_dir};
use super::integrity::{StoreHealth, examine};
use super::{Store, StoreReader};

const OP: &str = "recover";

/// The tables salvaged by key scan, with their integer primary key (the rowid), in the order
/// they are copied. `cold_side_vectors` is salvaged per salvaged cold entry, so no vector
/// outlives its entry.
const ROWID_TABLES: &[(&str, &str)] = &[
    ("journal", "seq"),
    ("frames", "task_id"),
    ("events", "id"),
    ("cold", "id"),
];

/// The table of vectors of side dense spaces, keyed by cold entry.
const SIDE_VECTORS: &str = "cold_side_vectors";

#[cfg(test)]
/// Tables of the schema that are not copied: their content is derived (`cold_fts` and
/// `cold_count`, written by triggers; `cold_shown`, rebuilt from the salvaged entries) or belongs to the fresh file (`schema_version`, SQLite's own
/// `sqlite_sequence`).
const NOT_COPIED: &[&str] = &[
    "schema_version",
    "sqlite_sequence",
    "cold_fts",
    "cold_count",
    "cold_shown",
];

/// What [`Store::recover`] did.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Recovery {
    /// The store passed the check; nothing was done.
    NotNeeded(StoreHealth),
    /// The readable rows were salvaged into a fresh store that now is the store.
    Recovered {
        /// What the check found wrong.
        damage: String,
        /// Per table: rows salvaged, rejected and lost.
        tables: Vec<TableSalvage>,
        /// Where the damaged files were moved (database, WAL and shared-memory file).
        damaged_files: PathBuf,
    },
}

/// The salvage of one table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableSalvage {
    /// The table.
    pub table: &'static str,
    /// Rows copied into the recovered store.
    pub salvaged: u64,
    /// Rows that could be read but that the current schema refuses (a constraint or a type):
    /// bytes on a damaged page that happened to decode.
    pub rejected: u64,
    /// Rows whose key was readable but whose content was not (for side vectors: cold entries
    /// whose vectors could not be read; the idle back-fill computes them again).
    pub unreadable_rows: u64,
    /// Key ranges (inclusive) no read could reach: whatever rows they held are lost.
    pub lost_ranges: Vec<(i64, i64)>,
    /// The damaged store has no such table (it was written by an older schema).
    pub absent: bool,
}

impl fmt::Display for TableSalvage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.absent {
            return write!(f, "{}: not in the damaged store", self.table);
        }
        write!(f, "{}: {} salvaged", self.table, self.salvaged)?;
        if self.rejected > 0 {
            write!(f, ", {} rejected as invalid", self.rejected)?;
        }
        if self.unreadable_rows > 0 {
            write!(f, ", {} unreadable", self.unreadable_rows)?;
        }
        for (from, to) in &self.lost_ranges {
            if *to == i64::MAX {
                write!(f, ", keys from {from} on unreachable")?;
            } else {
                write!(f, ", keys {from}..={to} unreachable")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Recovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recovery::NotNeeded(health) => write!(f, "nothing to recover: the store is {health}"),
            Recovery::Recovered {
                damage,
                tables,
                damaged_files,
            } => {
                writeln!(f, "damage found: {damage}")?;
                for t in tables {
                    writeln!(f, "  {t}")?;
                }
                write!(
                    f,
                    "the recovered store passed the integrity check and is in place; the damaged \
                     files are in {}",
                    damaged_files.display()
                )
            }
        }
    }
}

/// Salvages a damaged store into a fresh one and swaps it in (see the module comment).
pub(super) fn recover(files: &StoreFiles) -> Result<Recovery, StoreError> {
    let damage = match examine(files, OP)? {
        StoreHealth::Damaged { detail } => detail,
        health => return Ok(Recovery::NotNeeded(health)),
    };
    let work = files.new_aside_dir(OP, "recovering")?;
    let recovered = work.join("recovered.db");
    let salvaged = salvage_into(files, &work, &recovered);
    let tables = match salvaged {
        Ok(tables) => tables,
        Err(e) => {
            // Only copies are in the work directory; the damaged files were never touched.
            let _ = fs::remove_dir_all(&work);
            return Err(e);
        }
    };
    let damaged_files = swap_in(files, &recovered)?;
    fs::remove_dir_all(&work).map_err(|e| io_err(OP, &work, e))?;
    tracing::warn!(path = %files.db.display(), damaged = %damaged_files.display(), "memory store recovered");
    Ok(Recovery::Recovered {
        damage,
        tables,
        damaged_files,
    })
}

/// The two databases of a salvage, with the paths their errors name: the damaged store (read
/// through its work copy) and the fresh one.
struct Stores<'a> {
    src: &'a Connection,
    damaged: &'a Path,
    dst: &'a Connection,
    fresh: &'a Path,
}

/// Copies the damaged files into `work`, salvages their rows into `recovered` and checks it.
fn salvage_into(
    files: &StoreFiles,
    work: &Path,
    recovered: &Path,
) -> Result<Vec<TableSalvage>, StoreError> {
    let source = work_copy(files, work)?;
    let src = Connection::open_with_flags(
        &source,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ctx(OP, &source)?;
    let mut fresh = Store::open(recovered)?;
    let tables = {
        let (conn, path) = fresh.conn_mut();
        let tx = conn.transaction().ctx(OP, path)?;
        let mut tables = Vec::new();
        let mut cold_ids = Vec::new();
        let stores = Stores {
            src: &src,
            damaged: &files.db,
            dst: &tx,
            fresh: path,
        };
        for &(table, key) in ROWID_TABLES {
            let ids = (table == "cold").then_some(&mut cold_ids);
            tables.push(salvage_table(&stores, table, key, ids)?);
        }
        tables.push(salvage_side_vectors(&stores, &cold_ids)?);
        // Derived from the salvaged entries, as the store writes it beside each entry.
        tx.execute(
            "INSERT OR IGNORE INTO cold_shown (shown, cold_id) \
             SELECT j.value, c.id FROM cold c, json_each(c.event, '$.shown') j",
            [],
        )
        .ctx(OP, path)?;
        tx.commit().ctx(OP, path)?;
        tables
    };
    fresh.checkpoint()?;
    drop(fresh);
    drop(src);
    match examine(&StoreFiles::new(recovered), OP)? {
        StoreHealth::Damaged { detail } => {
            return Err(StoreError::Unrecoverable {
                op: OP,
                path: files.db.clone(),
                detail: format!("the salvaged store fails its own check: {detail}"),
            });
        }
        StoreHealth::Healthy | StoreHealth::Empty => {}
    }
    StoreReader::open(recovered)?.integrity_check()?;
    Ok(tables)
}

/// Copies the database and its WAL into `work` and returns the copy's path. A database that is
/// missing or empty beside a WAL is replaced by one page of zeros: with a non-empty database
/// file SQLite reads the WAL, and every page the WAL holds (page 1 and the schema among them,
/// for a store never checkpointed) comes from there.
fn work_copy(files: &StoreFiles, work: &Path) -> Result<PathBuf, StoreError> {
    let source = work.join("source.db");
    let copy = StoreFiles::new(&source);
    if file_len(OP, &files.db)?.unwrap_or(0) > 0 {
        copy_private(OP, &files.db, &source)?;
    } else {
        let page = wal_page_size(&files.wal)?;
        fs::write(&source, vec![0u8; page]).map_err(|e| io_err(OP, &source, e))?;
        make_private(OP, &source)?;
    }
    if files.wal.exists() {
        copy_private(OP, &files.wal, &copy.wal)?;
    }
    Ok(source)
}

/// The page size recorded in a WAL header (big-endian at offset 8).
fn wal_page_size(wal: &Path) -> Result<usize, StoreError> {
    let bytes = fs::read(wal).map_err(|e| io_err(OP, wal, e))?;
    let size = bytes
        .get(8..12)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .unwrap_or(0);
    // A power of two between 512 and 65536 (SQLite's file format); anything else is no WAL.
    match usize::try_from(size) {
        Ok(n) if n.is_power_of_two() && (512..=65_536).contains(&n) => Ok(n),
        _ => Err(StoreError::Unrecoverable {
            op: OP,
            path: wal.to_path_buf(),
            detail: format!("the WAL header gives no valid page size ({size})"),
        }),
    }
}

/// The column names of `table`, `None` when the table does not exist.
fn columns(conn: &Connection, path: &Path, table: &str) -> Result<Option<Vec<String>>, StoreError> {
    let mut stmt = conn
        .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
        .map_err(|e| unreadable_schema(path, e))?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| unreadable_schema(path, e))?;
    Ok((!names.is_empty()).then_some(names))
}

fn unreadable_schema(path: &Path, e: rusqlite::Error) -> StoreError {
    StoreError::Unrecoverable {
        op: OP,
        path: path.to_path_buf(),
        detail: format!("its schema cannot be read ({e})"),
    }
}

/// The columns both stores have, in the fresh store's order, or `None` when the damaged store
/// has no such table.
fn shared_columns(s: &Stores<'_>, table: &str) -> Result<Option<Vec<String>>, StoreError> {
    let Some(theirs) = columns(s.src, s.damaged, table)? else {
        return Ok(None);
    };
    let ours = columns(s.dst, s.fresh, table)?.unwrap_or_default();
    Ok(Some(
        ours.into_iter().filter(|c| theirs.contains(c)).collect(),
    ))
}

/// The empty report of `table` and the columns to copy (`None` when the damaged store has no
/// such table, which the report then says).
fn begin(
    s: &Stores<'_>,
    table: &'static str,
) -> Result<(TableSalvage, Option<Vec<String>>), StoreError> {
    let cols = shared_columns(s, table)?;
    let out = TableSalvage {
        table,
        absent: cols.is_none(),
        ..TableSalvage::default()
    };
    Ok((out, cols))
}

/// An insert of one salvaged row; a constraint refusal counts as rejected, any other error
/// (the fresh file cannot be written) stops the recovery.
fn insert_row(
    stmt: &mut rusqlite::Statement<'_>,
    path: &Path,
    row: &[Value],
    out: &mut TableSalvage,
) -> Result<(), StoreError> {
    match stmt.execute(params_from_iter(row)) {
        Ok(_) => {
            out.salvaged += 1;
            Ok(())
        }
        Err(e) if e.sqlite_error_code() == Some(ErrorCode::ConstraintViolation) => {
            out.rejected += 1;
            Ok(())
        }
        Err(e) => Err(StoreError::sql(OP, path, e)),
    }
}

fn insert_sql(table: &str, cols: &[String]) -> String {
    let marks = vec!["?"; cols.len()].join(", ");
    format!("INSERT INTO {table} ({}) VALUES ({marks})", cols.join(", "))
}

/// Salvages one rowid table in key order. `cold_ids` collects the keys copied.
fn salvage_table(
    s: &Stores<'_>,
    table: &'static str,
    key: &str,
    mut cold_ids: Option<&mut Vec<i64>>,
) -> Result<TableSalvage, StoreError> {
    let (mut out, cols) = begin(s, table)?;
    let Some(cols) = cols else {
        return Ok(out);
    };
    let select = format!(
        "SELECT {key}, {} FROM {table} WHERE {key} >= ?1 ORDER BY {key}",
        cols.join(", ")
    );
    let probe = KeyProbe {
        sql: format!("SELECT {key} FROM {table} WHERE {key} >= ?1 ORDER BY {key} LIMIT 1"),
    };
    let mut insert = s.dst.prepare(&insert_sql(table, &cols)).ctx(OP, s.fresh)?;
    let mut from = i64::MIN;
    loop {
        let mut row_sink = |key: i64, row: &[Value]| -> Result<(), StoreError> {
            let before = out.salvaged;
            insert_row(&mut insert, s.fresh, row, &mut out)?;
            if out.salvaged > before
                && let Some(ids) = cold_ids.as_deref_mut()
            {
                ids.push(key);
            }
            Ok(())
        };
        if let ScanEnd::Done = read_from(s.src, &select, &mut from, &mut row_sink)? {
            break;
        }
        // A read failed at the first key >= `from`: is that key itself reachable?
        match probe.first_at_or_after(s.src, from) {
            Ok(None) => break,
            Ok(Some(k)) => {
                // The key is there but its row is not readable (a damaged overflow page).
                out.unreadable_rows += 1;
                match k.checked_add(1) {
                    Some(next) => from = next,
                    None => break,
                }
            }
            Err(_) => match probe.resume_point(s.src, from) {
                Some(next) => {
                    out.lost_ranges.push((from, next - 1));
                    from = next;
                }
                None => {
                    out.lost_ranges.push((from, i64::MAX));
                    break;
                }
            },
        }
    }
    Ok(out)
}

/// How a scan of the damaged store ended.
enum ScanEnd {
    /// Every row from the start key on was read.
    Done,
    /// A read failed (a damaged page); the rows before it were handed on.
    Failed,
}

/// Reads rows of `select` from key `*from` on, handing each to `sink` and moving `*from` past
/// it. An error is a failure of the fresh store; a failed read of the damaged one is
/// [`ScanEnd::Failed`].
fn read_from<F>(
    src: &Connection,
    select: &str,
    from: &mut i64,
    sink: &mut F,
) -> Result<ScanEnd, StoreError>
where
    F: FnMut(i64, &[Value]) -> Result<(), StoreError>,
{
    let Ok(mut stmt) = src.prepare(select) else {
        return Ok(ScanEnd::Failed);
    };
    let width = stmt.column_count();
    let Ok(mut rows) = stmt.query([*from]) else {
        return Ok(ScanEnd::Failed);
    };
    loop {
        let row = match rows.next() {
            Ok(Some(row)) => row,
            Ok(None) => return Ok(ScanEnd::Done),
            Err(_) => return Ok(ScanEnd::Failed),
        };
        let read = row.get::<_, i64>(0).and_then(|key| {
            (1..width)
                .map(|i| row.get::<_, Value>(i))
                .collect::<rusqlite::Result<Vec<_>>>()
                .map(|values| (key, values))
        });
        let Ok((key, values)) = read else {
            return Ok(ScanEnd::Failed);
        };
        sink(key, &values)?;
        match key.checked_add(1) {
            Some(next) => *from = next,
            None => return Ok(ScanEnd::Done),
        }
    }
}

/// Seeks of one table's key from the root of its b-tree: a seek reaches a key unless a page on
/// the way to it is damaged.
struct KeyProbe {
    sql: String,
}

impl KeyProbe {
    fn first_at_or_after(&self, src: &Connection, key: i64) -> rusqlite::Result<Option<i64>> {
        src.query_row(&self.sql, [key], |r| r.get(0)).optional()
    }

    /// The smallest key above `failed` whose seek succeeds, when there is one: the end of the
    /// damaged range. Galloping finds a reachable key, bisection the boundary (a seek fails
    /// exactly for the keys whose path runs through the damaged page, one contiguous range).
    fn resume_point(&self, src: &Connection, failed: i64) -> Option<i64> {
        let mut lo = failed;
        let mut step: i64 = 1;
        let mut hi = loop {
            let hi = lo.saturating_add(step);
            if self.first_at_or_after(src, hi).is_ok() {
                break hi;
            }
            if hi == i64::MAX {
                return None;
            }
            lo = hi;
            step = step.saturating_mul(2);
        };
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.first_at_or_after(src, mid).is_ok() {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi)
    }
}

/// Salvages the side vectors of each salvaged cold entry, one seek per entry, so a damaged
/// page loses only the vectors stored on it.
fn salvage_side_vectors(s: &Stores<'_>, cold_ids: &[i64]) -> Result<TableSalvage, StoreError> {
    let (mut out, cols) = begin(s, SIDE_VECTORS)?;
    let Some(cols) = cols else {
        return Ok(out);
    };
    let select = format!(
        "SELECT {} FROM {SIDE_VECTORS} WHERE cold_id = ?1",
        cols.join(", ")
    );
    let mut insert = s
        .dst
        .prepare(&insert_sql(SIDE_VECTORS, &cols))
        .ctx(OP, s.fresh)?;
    for &id in cold_ids {
        let read = s.src.prepare(&select).and_then(|mut stmt| {
            let width = stmt.column_count();
            stmt.query_map([id], |r| {
                (0..width)
                    .map(|i| r.get::<_, Value>(i))
                    .collect::<rusqlite::Result<Vec<_>>>()
            })?
            .collect::<rusqlite::Result<Vec<_>>>()
        });
        match read {
            Ok(rows) => {
                for row in rows {
                    insert_row(&mut insert, s.fresh, &row, &mut out)?;
                }
            }
            Err(_) => out.unreadable_rows += 1,
        }
    }
    Ok(out)
}

/// Moves the damaged files into `<db>.damaged-<time>/` and the recovered database into their
/// place. The WAL goes aside before the new database arrives, so it is never applied to it; the
/// database is hard-linked aside (copied where links are not supported) and then replaced by one
/// atomic rename, so at every moment either the damaged or the recovered database is in place.
fn swap_in(files: &StoreFiles, recovered: &Path) -> Result<PathBuf, StoreError> {
    let aside = files.new_aside_dir(OP, "damaged")?;
    for path in files.all() {
        let Some(name) = path.file_name() else {
            continue;
        };
        if !path.exists() {
            continue;
        }
        let to = aside.join(name);
        if path != files.db.as_path() {
            fs::rename(path, &to).map_err(|e| io_err(OP, path, e))?;
        } else if fs::hard_link(path, &to).is_err() {
            copy_private(OP, path, &to)?;
        }
    }
    sync_dir(OP, &aside)?;
    fs::rename(recovered, &files.db).map_err(|e| io_err(OP, &files.db, e))?;
    make_private(OP, &files.db)?;
    sync_dir(OP, files.dir())?;
    Ok(aside)
}

/// Every table of the current schema is either salvaged or deliberately not copied.
#[cfg(test)]
pub(super) fn covered_tables() -> Vec<&'static str> {
    ROWID_TABLES
        .iter()
        .map(|(t, _)| *t)
        .chain([SIDE_VECTORS])
        .chain(NOT_COPIED.iter().copied())
        .collect()
}
