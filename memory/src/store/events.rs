//! The `events` table: the working window (L1), one row per context event with its vectors.
//! Rows leave this table only through [`Store::move_to_cold`](super::Store::move_to_cold), which
//! writes them to cold context in the same transaction.

use std::path::Path;

use rusqlite::{Row, params};

use super::error::{SqlContext, StoreError};
use super::{Store, StoreReader};
use crate::{ContextEvent, ToolOutput, estimate_tokens};

/// A dense embedding and the fingerprint of the model space it lives in. Vectors of different
/// fingerprints are never compared. Stored as little-endian `f32`s in the working window, and
/// as one byte per component in cold context ([`DenseVector::to_compact_blob`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DenseVector {
    /// The [`Fingerprint`](crate::Fingerprint) of the model space, in its text form.
    pub fingerprint: String,
    /// The embedding's components.
    pub values: Vec<f32>,
}

impl DenseVector {
    /// `values` in the space named by `fingerprint`.
    pub fn new(fingerprint: impl Into<String>, values: Vec<f32>) -> Self {
        Self {
            fingerprint: fingerprint.into(),
            values,
        }
    }

    pub(super) fn to_blob(&self) -> Vec<u8> {
        let mut blob = Vec::with_capacity(self.values.len() * 4);
        for v in &self.values {
            blob.extend_from_slice(&v.to_le_bytes());
        }
        blob
    }

    /// The vector quantized (`simd::quantize`): [`QUANTIZED_TAG`], the width as a u32, one byte
    /// per component, zeros to a multiple of 4 bytes. A 384-d vector takes 392 bytes instead of
    /// 1,536; it decodes to the unit vector recall scores, so what is scored before and after a
    /// restart is the same.
    pub(super) fn to_compact_blob(&self) -> Vec<u8> {
        let dim = self.values.len();
        let mut q = vec![0i8; dim];
        crate::simd::quantize(&self.values, &mut q);
        let mut blob = Vec::with_capacity(8 + dim.next_multiple_of(4));
        blob.extend_from_slice(&QUANTIZED_TAG.to_le_bytes());
        blob.extend_from_slice(&(dim as u32).to_le_bytes());
        blob.extend(q.iter().map(|&x| x as u8));
        blob.resize(8 + dim.next_multiple_of(4), 0);
        blob
    }
}

/// First word of a quantized blob: a NaN bit pattern, which no stored `f32` vector starts with
/// (vectors are checked finite before they are stored or scored), so old `f32` rows and new
/// quantized rows tell themselves apart without a schema change.
pub(super) const QUANTIZED_TAG: u32 = 0x7fc0_5138;

/// Decodes a `dense` blob, `f32` or quantized; `None` when it is neither well formed.
pub(super) fn floats_from_blob(blob: &[u8]) -> Option<Vec<f32>> {
    if !blob.len().is_multiple_of(4) {
        return None;
    }
    let word = |at: usize| {
        blob.get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    if word(0) == Some(QUANTIZED_TAG) {
        let dim = word(4)? as usize;
        if blob.len() != 8 + dim.next_multiple_of(4) {
            return None;
        }
        let q: Vec<i8> = blob[8..8 + dim].iter().map(|&b| b as i8).collect();
        return Some(crate::simd::dequantize(&q));
    }
    Some(
        blob.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// Pairs a `dense` blob with its fingerprint column.
pub(super) fn dense_from_columns(
    op: &'static str,
    path: &Path,
    blob: Option<Vec<u8>>,
    fingerprint: Option<String>,
) -> Result<Option<DenseVector>, StoreError> {
    match (blob, fingerprint) {
        (Some(blob), Some(fingerprint)) => {
            let values = floats_from_blob(&blob).ok_or_else(|| {
                StoreError::data(op, path, format!("dense blob of {} bytes", blob.len()))
            })?;
            Ok(Some(DenseVector {
                fingerprint,
                values,
            }))
        }
        (None, None) => Ok(None),
        _ => Err(StoreError::data(
            op,
            path,
            "dense vector without fingerprint",
        )),
    }
}

/// `ContextEvent::id` prefix of a window event that is a copy recalled from cold context
/// (`cold:<cold id>`): pruning drops such a copy instead of archiving it a second time.
pub const RECALLED_PREFIX: &str = "cold:";

/// An event as written to the window: the event itself, its vectors and its token estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRecord {
    /// The context event itself.
    pub event: ContextEvent,
    /// Its vector in the main dense space, if it was embedded.
    pub dense: Option<DenseVector>,
    /// The sparse vector as JSON text, in whatever shape its embedder writes; SQLite checks
    /// only that it is valid JSON.
    pub sparse: Option<String>,
    /// Token estimate of the event as rendered in the prompt (`accumulatedTokens` sums these).
    pub tokens: u64,
}

impl EventRecord {
    /// A record without vectors, its tokens estimated from the input, the response and the tool
    /// outputs (SPEC §4.8 `EstimateTokens`).
    pub fn new(event: ContextEvent) -> Self {
        let tokens = event_tokens(&event.input, &event.response, &event.tool_results);
        Self {
            event,
            dense: None,
            sparse: None,
            tokens: tokens as u64,
        }
    }

    /// The same record carrying `dense` as its dense vector.
    pub fn with_dense(mut self, dense: DenseVector) -> Self {
        self.dense = Some(dense);
        self
    }

    /// The same record carrying `sparse_json` as its sparse vector (JSON text).
    pub fn with_sparse(mut self, sparse_json: impl Into<String>) -> Self {
        self.sparse = Some(sparse_json.into());
        self
    }
}

/// An event read back from the window, with the row id the store gave it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredEvent {
    /// The window row id, what [`ColdMove::event_id`](super::ColdMove::event_id) names.
    pub id: i64,
    /// The event as it was written.
    pub record: EventRecord,
}

/// Size of the window, for the token budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowStats {
    /// Events in the window.
    pub events: u64,
    /// Sum of their token estimates (`accumulatedTokens`).
    pub tokens: u64,
}

/// An event's share of the window's tokens: its input, response and tool outputs by the
/// estimate.
fn event_tokens(input: &str, response: &str, tool_results: &[ToolOutput]) -> usize {
    let tools: usize = tool_results
        .iter()
        .map(|t| estimate_tokens(&t.output))
        .sum();
    estimate_tokens(input) + estimate_tokens(response) + tools
}

/// Migration 11: every window event's tokens again by today's estimate, so a window kept from
/// before is not pruned for what the old estimate (two per character) said it cost. A row whose
/// tool outputs do not read keeps its count; reading it fails as it did before.
pub(super) fn reestimate_tokens(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    let mut read = conn.prepare("SELECT id, input, response, tool_results FROM events")?;
    let counts = read
        .query_map([], |r| {
            let (input, response): (String, String) = (r.get(1)?, r.get(2)?);
            let results: String = r.get(3)?;
            let tokens = serde_json::from_str::<Vec<ToolOutput>>(&results)
                .ok()
                .map(|outputs| event_tokens(&input, &response, &outputs));
            Ok((r.get::<_, i64>(0)?, tokens))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut write = conn.prepare("UPDATE events SET tokens = ?2 WHERE id = ?1")?;
    for (id, tokens) in counts {
        if let Some(tokens) = tokens {
            write.execute(rusqlite::params![id, tokens as i64])?;
        }
    }
    Ok(())
}

pub(super) const EVENT_COLUMNS: &str = "id, event_id, timestamp_ms, source, input, response, \
     tools_used, tool_results, dense, dense_fp, sparse, tokens, shown";

/// Reads a row selected with [`EVENT_COLUMNS`].
pub(super) fn event_from_row(
    op: &'static str,
    path: &Path,
    row: &Row<'_>,
) -> Result<StoredEvent, StoreError> {
    let get = |e| StoreError::sql(op, path, e);
    let tools_used: String = row.get(6).map_err(get)?;
    let tool_results: String = row.get(7).map_err(get)?;
    let tools_used: Vec<String> = serde_json::from_str(&tools_used)
        .map_err(|e| StoreError::data(op, path, format!("tools_used: {e}")))?;
    let tool_results: Vec<ToolOutput> = serde_json::from_str(&tool_results)
        .map_err(|e| StoreError::data(op, path, format!("tool_results: {e}")))?;
    let tokens: i64 = row.get(11).map_err(get)?;
    let shown: String = row.get(12).map_err(get)?;
    let shown: Vec<String> = serde_json::from_str(&shown)
        .map_err(|e| StoreError::data(op, path, format!("shown: {e}")))?;
    let event = ContextEvent {
        id: row.get(1).map_err(get)?,
        timestamp_ms: row.get(2).map_err(get)?,
        source: row.get(3).map_err(get)?,
        input: row.get(4).map_err(get)?,
        response: row.get(5).map_err(get)?,
        tools_used,
        tool_results,
        shown,
    };
    Ok(StoredEvent {
        id: row.get(0).map_err(get)?,
        record: EventRecord {
            event,
            dense: dense_from_columns(
                op,
                path,
                row.get(8).map_err(get)?,
                row.get(9).map_err(get)?,
            )?,
            sparse: row.get(10).map_err(get)?,
            tokens: u64::try_from(tokens)
                .map_err(|_| StoreError::data(op, path, format!("tokens {tokens}")))?,
        },
    })
}

impl Store {
    /// Drops window events that are copies recalled from cold context (their `id` starts with
    /// [`RECALLED_PREFIX`]): the original stays in cold context, so nothing is lost. Any other
    /// event is left alone — the only way out of the window for an event of its own is
    /// `move_to_cold`. Returns how many copies were dropped.
    pub fn events_drop_recalled(&mut self, ids: &[i64]) -> Result<usize, StoreError> {
        const OP: &str = "events_drop_recalled";
        let (conn, path) = self.conn_mut();
        let tx = conn.savepoint().ctx(OP, path)?;
        let mut dropped = 0;
        {
            let mut select = tx
                .prepare_cached(&format!("SELECT {EVENT_COLUMNS} FROM events WHERE id = ?1"))
                .ctx(OP, path)?;
            let mut delete = tx
                .prepare_cached("DELETE FROM events WHERE id = ?1")
                .ctx(OP, path)?;
            for &id in ids {
                let mut rows = select.query([id]).ctx(OP, path)?;
                let Some(row) = rows.next().ctx(OP, path)? else {
                    continue;
                };
                let stored = event_from_row(OP, path, row)?;
                drop(rows);
                if stored.record.event.id.starts_with(RECALLED_PREFIX) {
                    dropped += delete.execute([id]).ctx(OP, path)?;
                }
            }
        }
        tx.commit().ctx(OP, path)?;
        Ok(dropped)
    }

    /// Appends one event to the window; returns its row id. Durable when it returns.
    pub fn event_append(&mut self, record: &EventRecord) -> Result<i64, StoreError> {
        let ids = self.append_records("event_append", std::slice::from_ref(record))?;
        Ok(ids[0])
    }

    /// Appends events in one transaction (all or none); returns their row ids in order.
    pub fn events_append(&mut self, records: &[EventRecord]) -> Result<Vec<i64>, StoreError> {
        self.append_records("events_append", records)
    }

    fn append_records(
        &mut self,
        op: &'static str,
        records: &[EventRecord],
    ) -> Result<Vec<i64>, StoreError> {
        let (conn, path) = self.conn_mut();
        let tx = conn.savepoint().ctx(op, path)?;
        let mut ids = Vec::with_capacity(records.len());
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT INTO events (event_id, timestamp_ms, source, input, response, \
                     tools_used, tool_results, dense, dense_fp, sparse, tokens, shown) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                )
                .ctx(op, path)?;
            for r in records {
                let e = &r.event;
                let tokens = i64::try_from(r.tokens)
                    .map_err(|_| StoreError::data(op, path, format!("tokens {}", r.tokens)))?;
                stmt.execute(params![
                    e.id,
                    e.timestamp_ms,
                    e.source,
                    e.input,
                    e.response,
                    super::to_json(op, path, &e.tools_used)?,
                    super::to_json(op, path, &e.tool_results)?,
                    r.dense.as_ref().map(DenseVector::to_blob),
                    r.dense.as_ref().map(|d| d.fingerprint.as_str()),
                    r.sparse,
                    tokens,
                    super::to_json(op, path, &e.shown)?,
                ])
                .ctx(op, path)?;
                ids.push(tx.last_insert_rowid());
            }
        }
        tx.commit().ctx(op, path)?;
        Ok(ids)
    }

    /// Replaces the dense vectors of window events (back-fill after the embedding model changed),
    /// all in one transaction. An unknown id fails the whole batch.
    pub fn events_set_dense(&mut self, updates: &[(i64, DenseVector)]) -> Result<(), StoreError> {
        const OP: &str = "events_set_dense";
        let (conn, path) = self.conn_mut();
        let tx = conn.savepoint().ctx(OP, path)?;
        {
            let mut stmt = tx
                .prepare_cached("UPDATE events SET dense = ?2, dense_fp = ?3 WHERE id = ?1")
                .ctx(OP, path)?;
            for (id, dense) in updates {
                let n = stmt
                    .execute(params![id, dense.to_blob(), dense.fingerprint])
                    .ctx(OP, path)?;
                if n == 0 {
                    return Err(StoreError::Missing {
                        op: OP,
                        path: path.to_path_buf(),
                        what: "event",
                        id: *id,
                    });
                }
            }
        }
        tx.commit().ctx(OP, path)
    }
}

impl StoreReader {
    /// The whole window in time order (timestamp, then row id: an event inserted at an existing
    /// timestamp goes after the events already there, as `InsertByTimestamp` does).
    pub fn events_window(&self) -> Result<Vec<StoredEvent>, StoreError> {
        const OP: &str = "events_window";
        let path = &self.path;
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {EVENT_COLUMNS} FROM events ORDER BY timestamp_ms, id"
            ))
            .ctx(OP, path)?;
        let mut rows = stmt.query([]).ctx(OP, path)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().ctx(OP, path)? {
            out.push(event_from_row(OP, path, row)?);
        }
        Ok(out)
    }

    /// One window event by row id.
    pub fn event_get(&self, id: i64) -> Result<Option<StoredEvent>, StoreError> {
        const OP: &str = "event_get";
        let path = &self.path;
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {EVENT_COLUMNS} FROM events WHERE id = ?1"))
            .ctx(OP, path)?;
        let mut rows = stmt.query([id]).ctx(OP, path)?;
        match rows.next().ctx(OP, path)? {
            Some(row) => Ok(Some(event_from_row(OP, path, row)?)),
            None => Ok(None),
        }
    }

    /// Number of window events and the sum of their token estimates.
    pub fn events_stats(&self) -> Result<WindowStats, StoreError> {
        const OP: &str = "events_stats";
        let (events, tokens): (i64, i64) = self
            .conn
            .prepare_cached("SELECT count(*), coalesce(sum(tokens), 0) FROM events")
            .ctx(OP, &self.path)?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
            .ctx(OP, &self.path)?;
        Ok(WindowStats {
            events: events.max(0) as u64,
            tokens: tokens.max(0) as u64,
        })
    }
}
