//! The `cold` table (L2) and its FTS5 index: events archived from the window, searchable by
//! keyword (pre-tokenised text, BM25) and by meaning (dense vectors of one fingerprint).
//! Reading never deletes (DESIGN §4.2): recall copies an entry and counts an access.
//!
//! An entry has at most one vector in the main space (`cold.dense`, the model that also prunes
//! and gates injection) and at most one in each side space (`cold_side_vectors`, models used
//! only to rank recall); a side vector is deleted with its entry.

use std::path::Path;

use rusqlite::{OptionalExtension, Row, params};

use super::error::{SqlContext, StoreError};
use super::events::{
    DenseVector, EVENT_COLUMNS, dense_from_columns, event_from_row, floats_from_blob,
};
use super::keyset::Keyset;
use super::{Store, StoreReader};
use crate::ContextEvent;

/// SPEC §5.2 `FindColdDocs` as the archive heartbeat calls it: idle for more than 72 hours…
pub const COLD_MAX_IDLE_MS: i64 = 72 * 60 * 60 * 1000;
/// …and accessed at most twice.
pub const COLD_MAX_ACCESS: u64 = 2;

/// Rows fetched per step of a [`ColdVectors`] scan: bounds memory while keeping the number of
/// queries small.
const VECTOR_BATCH: usize = 512;

/// A cold entry found by keyword: its id, BM25 score (higher is better), original timestamp
/// and source.
#[derive(Clone, Debug, PartialEq)]
pub struct KeywordHit {
    /// The cold entry's id.
    pub id: i64,
    /// BM25 relevance to the query; higher is better.
    pub score: f64,
    /// When the archived event happened, in Unix milliseconds.
    pub timestamp_ms: i64,
    /// The archived event's source.
    pub source: String,
}

/// One dense vector of a cold entry, with the entry's original timestamp and source.
#[derive(Clone, Debug, PartialEq)]
pub struct ColdVector {
    /// The cold entry's id.
    pub id: i64,
    /// When the archived event happened, in Unix milliseconds.
    pub timestamp_ms: i64,
    /// The archived event's source.
    pub source: String,
    /// The vector's components, in the space the scan was asked for.
    pub values: Vec<f32>,
}

/// A new cold entry written directly (not moved from the window).
#[derive(Clone, Debug, PartialEq)]
pub struct ColdRecord {
    /// The event, with its original timestamp.
    pub event: ContextEvent,
    /// The text the entry is searched by (`textForVector`).
    pub text: String,
    /// `text` already tokenised, tokens joined by single spaces; this is what FTS5 indexes.
    pub tokens: String,
    /// The entry's vector in the main dense space, if it was embedded.
    pub dense: Option<DenseVector>,
    /// Where the entry came from, e.g. `prune`.
    pub archived_from: String,
}

/// One window event to archive, with the search text and tokens computed by the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColdMove {
    /// The window row to move ([`StoredEvent::id`](super::StoredEvent::id)).
    pub event_id: i64,
    /// The text the entry is searched by (`textForVector`).
    pub text: String,
    /// `text` tokenised, tokens joined by single spaces, for FTS5.
    pub tokens: String,
}

/// A cold entry as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct ColdEntry {
    /// The entry's row id; new entries always get higher ids.
    pub id: i64,
    /// The archived event, with its original timestamp.
    pub event: ContextEvent,
    /// The text the entry is searched by.
    pub text: String,
    /// `text` tokenised, as FTS5 indexes it.
    pub tokens: String,
    /// The entry's vector in the main dense space, if it has one.
    pub dense: Option<DenseVector>,
    /// How many times recall has returned the entry.
    pub access_count: u64,
    /// Unix milliseconds of the last access; the archival time until the first.
    pub last_access_ms: i64,
    /// Unix milliseconds when the entry was archived.
    pub created_ms: i64,
    /// Where the entry came from, e.g. `prune`.
    pub archived_from: String,
}

pub(super) const COLD_COLUMNS: &str = "id, event, text, tokens, dense, dense_fp, access_count, \
     last_access_ms, created_ms, archived_from";

pub(super) fn cold_from_row(
    op: &'static str,
    path: &Path,
    row: &Row<'_>,
) -> Result<ColdEntry, StoreError> {
    let get = |e| StoreError::sql(op, path, e);
    let event: String = row.get(1).map_err(get)?;
    let event: ContextEvent = serde_json::from_str(&event)
        .map_err(|e| StoreError::data(op, path, format!("event: {e}")))?;
    let access: i64 = row.get(6).map_err(get)?;
    Ok(ColdEntry {
        id: row.get(0).map_err(get)?,
        event,
        text: row.get(2).map_err(get)?,
        tokens: row.get(3).map_err(get)?,
        dense: dense_from_columns(op, path, row.get(4).map_err(get)?, row.get(5).map_err(get)?)?,
        access_count: u64::try_from(access)
            .map_err(|_| StoreError::data(op, path, format!("access_count {access}")))?,
        last_access_ms: row.get(7).map_err(get)?,
        created_ms: row.get(8).map_err(get)?,
        archived_from: row.get(9).map_err(get)?,
    })
}

/// The MATCH expression and SQL limit of a keyword search; `None` when it cannot match anything.
pub(super) fn fts_args(tokens: &str, limit: usize) -> Option<(String, i64)> {
    let query = fts_query(tokens)?;
    (limit > 0).then(|| (query, i64::try_from(limit).unwrap_or(i64::MAX)))
}

/// Builds an FTS5 query that matches any of the tokens. Each token is quoted, so FTS5 operators
/// and punctuation in user text are literal; tokens with no letter or digit are dropped because
/// `unicode61` would index nothing for them.
fn fts_query(tokens: &str) -> Option<String> {
    let terms: Vec<String> = tokens
        .split_whitespace()
        .filter(|t| t.chars().any(char::is_alphanumeric))
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" OR "))
}

/// The index-only keyword ranking (`+?2`: see [`keep_statements`](super::keep_statements)).
pub(super) const RANKED_MATCHES: &str = "SELECT rowid, bm25(cold_fts) AS score FROM cold_fts \
     WHERE cold_fts MATCH ?1 ORDER BY score, rowid LIMIT +?2";

const INSERT_COLD: &str = "INSERT INTO cold (event, timestamp_ms, source, text, tokens, dense, \
     dense_fp, access_count, last_access_ms, created_ms, archived_from) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, ?8, ?9)";

/// What a new cold entry's reply was shown (`ContextEvent::shown`), indexed for a forget.
const INSERT_SHOWN: &str = "INSERT OR IGNORE INTO cold_shown (shown, cold_id) VALUES (?1, ?2)";

/// Indexes what cold entry `id`'s reply was shown.
fn index_shown(
    tx: &rusqlite::Connection,
    op: &'static str,
    path: &std::path::Path,
    id: i64,
    shown: &[String],
) -> Result<(), StoreError> {
    if shown.is_empty() {
        return Ok(());
    }
    let mut insert = tx.prepare_cached(INSERT_SHOWN).ctx(op, path)?;
    for s in shown {
        insert.execute(params![s, id]).ctx(op, path)?;
    }
    Ok(())
}

impl Store {
    /// Writes one cold entry; returns its id. `access_count` starts at 0 and `last_access_ms`
    /// at `now_ms`, so idleness is counted from archival.
    pub fn cold_insert(&mut self, record: &ColdRecord, now_ms: i64) -> Result<i64, StoreError> {
        const OP: &str = "cold_insert";
        let (conn, path) = self.conn_mut();
        let tx = conn.savepoint().ctx(OP, path)?;
        tx.prepare_cached(INSERT_COLD)
            .ctx(OP, path)?
            .execute(params![
                super::to_json(OP, path, &record.event)?,
                record.event.timestamp_ms,
                record.event.source,
                record.text,
                record.tokens,
                record.dense.as_ref().map(DenseVector::to_compact_blob),
                record.dense.as_ref().map(|d| d.fingerprint.as_str()),
                now_ms,
                record.archived_from,
            ])
            .ctx(OP, path)?;
        let id = tx.last_insert_rowid();
        index_shown(&tx, OP, path, id, &record.event.shown)?;
        tx.commit().ctx(OP, path)?;
        Ok(id)
    }

    /// Moves window events to cold context in one transaction: each event is written to `cold`
    /// (original timestamp, its dense vector carried over) and only then deleted from the window.
    /// Any failure — an unknown or repeated id, a full disk — rolls back everything, so either
    /// all events moved or none did. Returns the new cold ids in the order of `moves`.
    pub fn move_to_cold(
        &mut self,
        moves: &[ColdMove],
        archived_from: &str,
        now_ms: i64,
    ) -> Result<Vec<i64>, StoreError> {
        const OP: &str = "move_to_cold";
        let (conn, path) = self.conn_mut();
        let tx = conn.savepoint().ctx(OP, path)?;
        let mut ids = Vec::with_capacity(moves.len());
        {
            let mut select = tx
                .prepare_cached(&format!("SELECT {EVENT_COLUMNS} FROM events WHERE id = ?1"))
                .ctx(OP, path)?;
            let mut insert = tx.prepare_cached(INSERT_COLD).ctx(OP, path)?;
            let mut delete = tx
                .prepare_cached("DELETE FROM events WHERE id = ?1")
                .ctx(OP, path)?;
            for m in moves {
                let mut rows = select.query([m.event_id]).ctx(OP, path)?;
                let Some(row) = rows.next().ctx(OP, path)? else {
                    return Err(StoreError::Missing {
                        op: OP,
                        path: path.to_path_buf(),
                        what: "window event",
                        id: m.event_id,
                    });
                };
                let stored = event_from_row(OP, path, row)?;
                drop(rows);
                let event = &stored.record.event;
                let dense = stored.record.dense.as_ref();
                insert
                    .execute(params![
                        super::to_json(OP, path, event)?,
                        event.timestamp_ms,
                        event.source,
                        m.text,
                        m.tokens,
                        dense.map(DenseVector::to_compact_blob),
                        dense.map(|d| d.fingerprint.as_str()),
                        now_ms,
                        archived_from,
                    ])
                    .ctx(OP, path)?;
                let id = tx.last_insert_rowid();
                index_shown(&tx, OP, path, id, &event.shown)?;
                ids.push(id);
                delete.execute([m.event_id]).ctx(OP, path)?;
            }
        }
        tx.commit().ctx(OP, path)?;
        Ok(ids)
    }

    /// Counts one access of each entry: `access_count + 1` and `last_access_ms = now_ms` (never
    /// moved backwards, should the clock be). Ids that are not there are skipped; returns how many
    /// accesses were counted. Nothing is deleted.
    pub fn cold_touch(&mut self, ids: &[i64], now_ms: i64) -> Result<usize, StoreError> {
        const OP: &str = "cold_touch";
        let (conn, path) = self.conn_mut();
        let tx = conn.savepoint().ctx(OP, path)?;
        let mut touched = 0;
        {
            let mut stmt = tx
                .prepare_cached(
                    "UPDATE cold SET access_count = access_count + 1, \
                     last_access_ms = max(last_access_ms, ?2) WHERE id = ?1",
                )
                .ctx(OP, path)?;
            for id in ids {
                touched += stmt.execute(params![id, now_ms]).ctx(OP, path)?;
            }
        }
        tx.commit().ctx(OP, path)?;
        Ok(touched)
    }

    /// Deletes cold entries; for the distiller, once their knowledge is committed to the graph
    /// (L3). Returns how many were removed.
    pub fn cold_remove(&mut self, ids: &[i64]) -> Result<usize, StoreError> {
        self.delete_each("cold_remove", "DELETE FROM cold WHERE id = ?1", ids)
    }

    /// Replaces the dense vectors of cold entries (back-fill after the model changed), in one
    /// transaction. An unknown id fails the whole batch, and so does an empty vector.
    pub fn cold_set_dense(&mut self, updates: &[(i64, DenseVector)]) -> Result<(), StoreError> {
        self.write_vectors(
            "cold_set_dense",
            "UPDATE cold SET dense = ?2, dense_fp = ?3 WHERE id = ?1",
            updates,
        )
    }

    /// Writes (or replaces) side-space vectors of cold entries, each under its own fingerprint,
    /// in one transaction; the main `dense` column is not touched. An unknown id fails the whole
    /// batch, and so does an empty vector.
    pub fn cold_set_side_dense(
        &mut self,
        updates: &[(i64, DenseVector)],
    ) -> Result<(), StoreError> {
        // Selecting from `cold` makes an unknown id insert nothing, which is how it is told
        // apart; an upsert that replaces still counts one change.
        self.write_vectors(
            "cold_set_side_dense",
            "INSERT INTO cold_side_vectors (cold_id, fp, dense) \
             SELECT id, ?3, ?2 FROM cold WHERE id = ?1 \
             ON CONFLICT (cold_id, fp) DO UPDATE SET dense = excluded.dense",
            updates,
        )
    }

    /// [`cold_set_dense`](Self::cold_set_dense) or
    /// [`cold_set_side_dense`](Self::cold_set_side_dense), by where `column` keeps its vectors.
    pub(crate) fn cold_set_vectors(
        &mut self,
        column: VectorColumn,
        updates: &[(i64, DenseVector)],
    ) -> Result<(), StoreError> {
        match column {
            VectorColumn::Main => self.cold_set_dense(updates),
            VectorColumn::Side => self.cold_set_side_dense(updates),
        }
    }

    /// Runs `sql` (`?1` cold id, `?2` vector blob, `?3` fingerprint) once per update in one
    /// immediate transaction; a statement that changes no row means an unknown id.
    fn write_vectors(
        &mut self,
        op: &'static str,
        sql: &str,
        updates: &[(i64, DenseVector)],
    ) -> Result<(), StoreError> {
        let (conn, path) = self.conn_mut();
        let tx = conn.savepoint().ctx(op, path)?;
        {
            let mut stmt = tx.prepare_cached(sql).ctx(op, path)?;
            for (id, dense) in updates {
                if dense.values.is_empty() {
                    return Err(StoreError::data(
                        op,
                        path,
                        format!("cold {id}: empty {} vector", dense.fingerprint),
                    ));
                }
                if stmt
                    .execute(params![id, dense.to_compact_blob(), dense.fingerprint])
                    .ctx(op, path)?
                    == 0
                {
                    return Err(StoreError::Missing {
                        op,
                        path: path.to_path_buf(),
                        what: "cold entry",
                        id: *id,
                    });
                }
            }
        }
        tx.commit().ctx(op, path)
    }
}

impl StoreReader {
    /// One cold entry. Reading does not count as an access; call `cold_touch` for a recall.
    pub fn cold_get(&self, id: i64) -> Result<Option<ColdEntry>, StoreError> {
        const OP: &str = "cold_get";
        let path = &self.path;
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {COLD_COLUMNS} FROM cold WHERE id = ?1"))
            .ctx(OP, path)?;
        let mut rows = stmt.query([id]).ctx(OP, path)?;
        match rows.next().ctx(OP, path)? {
            Some(row) => Ok(Some(cold_from_row(OP, path, row)?)),
            None => Ok(None),
        }
    }

    /// The text cold entry `id` is searched by, without reading the rest of its row (a past
    /// turn's recall record names its items by id; showing them needs only this).
    pub fn cold_text(&self, id: i64) -> Result<Option<String>, StoreError> {
        const OP: &str = "cold_text";
        let mut stmt = self
            .conn
            .prepare_cached("SELECT text FROM cold WHERE id = ?1")
            .ctx(OP, &self.path)?;
        stmt.query_row([id], |r| r.get(0))
            .optional()
            .ctx(OP, &self.path)
    }

    /// Up to `limit` cold entry ids greater than `after`, ascending: how a distiller with a
    /// cursor reads what was archived since its last pass.
    pub fn cold_ids_after(&self, after: i64, limit: usize) -> Result<Vec<i64>, StoreError> {
        const OP: &str = "cold_ids_after";
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM cold WHERE id > ?1 ORDER BY id LIMIT +?2")
            .ctx(OP, &self.path)?;
        stmt.query_map(params![after, limit], |r| r.get(0))
            .ctx(OP, &self.path)?
            .collect::<Result<Vec<_>, _>>()
            .ctx(OP, &self.path)
    }

    /// Number of cold entries: one row the insert and delete triggers keep (migration 6), not a
    /// walk of the table.
    pub fn cold_count(&self) -> Result<u64, StoreError> {
        let n: i64 = self
            .conn
            .prepare_cached("SELECT entries FROM cold_count WHERE id = 1")
            .ctx("cold_count", &self.path)?
            .query_row([], |r| r.get(0))
            .ctx("cold_count", &self.path)?;
        Ok(n.max(0) as u64)
    }

    /// Every distinct source of a cold entry (a scan of the table: recall reads it once, then
    /// keeps it current as it archives).
    pub fn cold_sources(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT DISTINCT source FROM cold")
            .ctx("cold_sources", &self.path)?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .ctx("cold_sources", &self.path)?;
        rows.collect::<Result<Vec<String>, _>>()
            .ctx("cold_sources", &self.path)
    }

    /// Keyword search: entries whose tokens contain any of `query_tokens` (space-separated,
    /// tokenised like the stored tokens), best first, at most `limit`. The score is SQLite's
    /// `bm25()` negated, so higher is better and every match scores above 0. Reads the full-text
    /// index only (no row of `cold`): the cheap form when the caller knows the entries' dates.
    pub fn cold_fts(
        &self,
        query_tokens: &str,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>, StoreError> {
        let tokens = self.informative_terms(query_tokens)?;
        match fts_args(&tokens, limit) {
            Some((query, limit)) => self.ranked_matches(&query, limit),
            None => Ok(Vec::new()),
        }
    }

    /// The index-only ranking of [`cold_fts`](Self::cold_fts), on a built query.
    fn ranked_matches(&self, query: &str, limit: i64) -> Result<Vec<(i64, f64)>, StoreError> {
        const OP: &str = "cold_fts";
        let path = &self.path;
        let mut stmt = self.conn.prepare_cached(RANKED_MATCHES).ctx(OP, path)?;
        stmt.query_map(params![query, limit], |r| {
            Ok((r.get(0)?, -r.get::<_, f64>(1)?))
        })
        .ctx(OP, path)?
        .collect::<Result<Vec<_>, _>>()
        .ctx(OP, path)
    }

    /// [`cold_fts`](Self::cold_fts) over the entries whose timestamp is before `before_ms`, with
    /// each hit's timestamp and source (what recall weighs besides the words).
    ///
    /// Ranked on the index alone first, then only the hits' rows are read: joining `cold` to
    /// every match before the `LIMIT` read one row per match (3× the ranking itself on a term
    /// held by a few hundred entries). When every one of the best `limit` matches is before
    /// `before_ms` — a live query, whose "before" is now — they are exactly the best `limit` of
    /// the filtered set; otherwise the filtered query runs.
    pub fn cold_fts_before(
        &self,
        query_tokens: &str,
        limit: usize,
        before_ms: i64,
    ) -> Result<Vec<KeywordHit>, StoreError> {
        const OP: &str = "cold_fts";
        let path = &self.path;
        let tokens = self.informative_terms(query_tokens)?;
        let Some((query, limit)) = fts_args(&tokens, limit) else {
            return Ok(Vec::new());
        };
        let ranked = self.ranked_matches(&query, limit)?;
        let mut meta = self
            .conn
            .prepare_cached("SELECT timestamp_ms, source FROM cold WHERE id = ?1")
            .ctx(OP, path)?;
        let mut hits = Vec::with_capacity(ranked.len());
        for (id, score) in ranked {
            let row = meta
                .query_row([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
                .optional()
                .ctx(OP, path)?;
            match row {
                Some((timestamp_ms, source)) if timestamp_ms < before_ms => hits.push(KeywordHit {
                    id,
                    score,
                    timestamp_ms,
                    source,
                }),
                // Later than the query, or removed between the two reads of a reader.
                _ => return self.filtered_matches(&query, limit, before_ms),
            }
        }
        Ok(hits)
    }

    /// The best `limit` matches of `query` before `before_ms`, the join read per match.
    pub(super) fn filtered_matches(
        &self,
        query: &str,
        limit: i64,
        before_ms: i64,
    ) -> Result<Vec<KeywordHit>, StoreError> {
        const OP: &str = "cold_fts";
        let path = &self.path;
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT f.rowid, bm25(cold_fts) AS score, c.timestamp_ms, c.source \
                 FROM cold_fts f JOIN cold c ON c.id = f.rowid \
                 WHERE cold_fts MATCH ?1 AND c.timestamp_ms < ?3 \
                 ORDER BY score, f.rowid LIMIT +?2",
            )
            .ctx(OP, path)?;
        stmt.query_map(params![query, limit, before_ms], |r| {
            Ok(KeywordHit {
                id: r.get(0)?,
                score: -r.get::<_, f64>(1)?,
                timestamp_ms: r.get(2)?,
                source: r.get(3)?,
            })
        })
        .ctx(OP, path)?
        .collect::<Result<Vec<_>, _>>()
        .ctx(OP, path)
    }

    /// Streams the vector of every cold entry whose vector has fingerprint `fingerprint`, in id
    /// order, a batch at a time. Entries of other fingerprints are never returned.
    pub fn cold_vectors(&self, fingerprint: &str) -> ColdVectors<'_> {
        ColdVectors::new(self, VectorColumn::Main, fingerprint)
    }

    /// [`cold_vectors`](Self::cold_vectors) for a side space: the vectors written by
    /// [`Store::cold_set_side_dense`] under `fingerprint`, in id order, a batch at a time.
    pub fn cold_side_vectors(&self, fingerprint: &str) -> ColdVectors<'_> {
        ColdVectors::new(self, VectorColumn::Side, fingerprint)
    }

    /// The scan of `column` under `fingerprint`.
    pub(crate) fn vectors_in(&self, column: VectorColumn, fingerprint: &str) -> ColdVectors<'_> {
        ColdVectors::new(self, column, fingerprint)
    }

    /// Ids of entries with no side vector of `fingerprint`, in id order: the ones to embed
    /// after that space was added. Entries with no text have nothing to embed and are not
    /// listed.
    pub fn cold_side_missing(&self, fingerprint: &str) -> Result<Vec<i64>, StoreError> {
        self.cold_side_missing_after(fingerprint, i64::MIN, usize::MAX)
    }

    /// The first `limit` of [`cold_side_missing`](Self::cold_side_missing) with an id above
    /// `after`: a back-fill step reads only the rows it is about to fill, not every entry.
    pub fn cold_side_missing_after(
        &self,
        fingerprint: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<i64>, StoreError> {
        self.cold_unembedded_after(VectorColumn::Side, fingerprint, after, limit)
    }

    /// Ids of entries with text and no vector of `fingerprint` in `column` (none yet, or one of
    /// another model), above `after`, the first `limit` in id order: what a back-fill of that
    /// space embeds next.
    pub(crate) fn cold_unembedded_after(
        &self,
        column: VectorColumn,
        fingerprint: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<i64>, StoreError> {
        const OP: &str = "cold_unembedded";
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut stmt = self
            .conn
            .prepare_cached(column.unembedded_sql())
            .ctx(OP, &self.path)?;
        stmt.query_map(params![fingerprint, after, limit], |r| r.get(0))
            .ctx(OP, &self.path)?
            .collect::<Result<Vec<_>, _>>()
            .ctx(OP, &self.path)
    }

    /// The highest cold id (0 for an empty table): ids only grow, so every entry archived later
    /// lies above it.
    pub fn cold_last_id(&self) -> Result<i64, StoreError> {
        const OP: &str = "cold_last_id";
        self.conn
            .prepare_cached("SELECT coalesce(max(id), 0) FROM cold")
            .ctx(OP, &self.path)?
            .query_row([], |r| r.get(0))
            .ctx(OP, &self.path)
    }

    /// Ids of entries whose vector is missing or of another fingerprint than `fingerprint`:
    /// the ones to re-embed after the model changed.
    pub fn cold_stale_vectors(&self, fingerprint: &str) -> Result<Vec<i64>, StoreError> {
        const OP: &str = "cold_stale_vectors";
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id FROM cold WHERE dense_fp IS NULL OR dense_fp <> ?1 ORDER BY id",
            )
            .ctx(OP, &self.path)?;
        stmt.query_map([fingerprint], |r| r.get(0))
            .ctx(OP, &self.path)?
            .collect::<Result<Vec<_>, _>>()
            .ctx(OP, &self.path)
    }

    /// SPEC §5.2 `FindColdDocs`: entries with `access_count <= max_access` whose last access is
    /// strictly before `now_ms - max_idle_ms`, least recently used first. The archive heartbeat
    /// passes [`COLD_MAX_IDLE_MS`] and [`COLD_MAX_ACCESS`].
    pub fn cold_find_cold(
        &self,
        now_ms: i64,
        max_idle_ms: i64,
        max_access: u64,
    ) -> Result<Vec<i64>, StoreError> {
        const OP: &str = "cold_find_cold";
        let cutoff = now_ms.saturating_sub(max_idle_ms);
        let max_access = i64::try_from(max_access).unwrap_or(i64::MAX);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id FROM cold WHERE access_count <= ?1 AND last_access_ms < ?2 \
                 ORDER BY last_access_ms, id",
            )
            .ctx(OP, &self.path)?;
        stmt.query_map(params![max_access, cutoff], |r| r.get(0))
            .ctx(OP, &self.path)?
            .collect::<Result<Vec<_>, _>>()
            .ctx(OP, &self.path)
    }
}

/// Where a dense space keeps its vectors, and so where a [`ColdVectors`] scan reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VectorColumn {
    /// `cold.dense`: the main model, the one prune and injection also use.
    Main,
    /// `cold_side_vectors`: a model that only ranks recall.
    Side,
}

impl VectorColumn {
    fn op(self) -> &'static str {
        match self {
            VectorColumn::Main => "cold_vectors",
            VectorColumn::Side => "cold_side_vectors",
        }
    }

    /// `?1` fingerprint, `?2` the last id seen, `?3` how many: ids of entries with text and no
    /// vector of that fingerprint in this column.
    fn unembedded_sql(self) -> &'static str {
        match self {
            VectorColumn::Main => {
                "SELECT id FROM cold WHERE id > ?2 AND text <> '' \
                 AND (dense_fp IS NULL OR dense_fp <> ?1) ORDER BY id LIMIT +?3"
            }
            VectorColumn::Side => {
                "SELECT id FROM cold c WHERE id > ?2 AND text <> '' AND NOT EXISTS \
                 (SELECT 1 FROM cold_side_vectors s WHERE s.cold_id = c.id AND s.fp = ?1) \
                 ORDER BY id LIMIT +?3"
            }
        }
    }

    /// One keyset page: `?1` fingerprint, `?2` the last id seen, `?3` the page size; columns
    /// id, dense, timestamp_ms, source.
    fn page_sql(self) -> &'static str {
        match self {
            VectorColumn::Main => {
                "SELECT id, dense, timestamp_ms, source FROM cold WHERE dense_fp = ?1 AND id > ?2 \
                 ORDER BY id LIMIT +?3"
            }
            VectorColumn::Side => {
                "SELECT s.cold_id, s.dense, c.timestamp_ms, c.source \
                 FROM cold_side_vectors s JOIN cold c ON c.id = s.cold_id \
                 WHERE s.fp = ?1 AND s.cold_id > ?2 ORDER BY s.cold_id LIMIT +?3"
            }
        }
    }
}

/// Iterator returned by [`StoreReader::cold_vectors`] and [`StoreReader::cold_side_vectors`]:
/// a keyset walk (see `keyset`), one query per batch.
pub struct ColdVectors<'a> {
    reader: &'a StoreReader,
    column: VectorColumn,
    fingerprint: String,
    walk: Keyset<ColdVector>,
}

impl<'a> ColdVectors<'a> {
    fn new(reader: &'a StoreReader, column: VectorColumn, fingerprint: &str) -> Self {
        Self {
            reader,
            column,
            fingerprint: fingerprint.to_owned(),
            walk: Keyset::new(),
        }
    }
}

/// The vectors of `fingerprint` in `column` with ids above `after`, one batch.
fn vector_page(
    reader: &StoreReader,
    column: VectorColumn,
    fingerprint: &str,
    after: i64,
) -> Result<Vec<(i64, ColdVector)>, StoreError> {
    let op = column.op();
    let path = &reader.path;
    let mut stmt = reader
        .conn
        .prepare_cached(column.page_sql())
        .ctx(op, path)?;
    let mut rows = stmt
        .query(params![fingerprint, after, VECTOR_BATCH as i64])
        .ctx(op, path)?;
    let mut page = Vec::new();
    while let Some(row) = rows.next().ctx(op, path)? {
        let id: i64 = row.get(0).ctx(op, path)?;
        let blob: Vec<u8> = row.get(1).ctx(op, path)?;
        let values = floats_from_blob(&blob).ok_or_else(|| {
            StoreError::data(
                op,
                path,
                format!("cold {id}: dense blob of {} bytes", blob.len()),
            )
        })?;
        page.push((
            id,
            ColdVector {
                id,
                timestamp_ms: row.get(2).ctx(op, path)?,
                source: row.get(3).ctx(op, path)?,
                values,
            },
        ));
    }
    Ok(page)
}

impl Iterator for ColdVectors<'_> {
    type Item = Result<ColdVector, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let Self {
            reader,
            column,
            fingerprint,
            walk,
        } = self;
        walk.next_with(VECTOR_BATCH, |after| {
            vector_page(reader, *column, fingerprint, after)
        })
    }
}

#[cfg(test)]
mod fts_query_tests {
    use super::fts_query;

    #[test]
    fn store_fts_query_quotes_tokens_and_drops_punctuation() {
        assert_eq!(fts_query(""), None);
        assert_eq!(fts_query("  ,  ;; "), None);
        assert_eq!(
            fts_query("北京 天气 a\"b NEAR("),
            Some("\"北京\" OR \"天气\" OR \"a\"\"b\" OR \"NEAR(\"".to_owned())
        );
    }
}
