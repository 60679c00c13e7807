//! Which cold items have been distilled. An item that gave nothing is kept cold and tried
//! again later, with a growing pause; nothing here ever deletes a cold item, and the kernel
//! may drop one only once [`ItemState::Done`] says its facts are in the graph.

use rusqlite::{Connection, OptionalExtension, params};

use crate::GraphError;
use crate::GraphStore;
use crate::error::SqlContext;

/// The first retry of an item that gave nothing comes after an hour; each later one waits
/// twice as long, up to a week.
const FIRST_RETRY_MS: i64 = 3_600_000;
const MAX_RETRY_MS: i64 = 7 * 86_400_000;

/// Where one cold item stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemState {
    /// Distilled; `facts` rows were written from it (0 when all it said had been forgotten).
    Done {
        /// How many facts and events it gave.
        facts: u64,
    },
    /// Distilled `attempts` times without a result; tried again at `retry_ms`.
    Waiting {
        /// Attempts so far.
        attempts: u32,
        /// When it is due again (Unix ms).
        retry_ms: i64,
    },
}

pub(crate) fn state(
    conn: &Connection,
    path: &std::path::Path,
    cold_item: i64,
) -> Result<Option<ItemState>, GraphError> {
    conn.query_row(
        "SELECT state, attempts, facts, retry_ms FROM distilled WHERE cold_item = ?1",
        [cold_item],
        |r| {
            let state: String = r.get(0)?;
            Ok(if state == "done" {
                ItemState::Done {
                    facts: r.get::<_, i64>(2)?.max(0) as u64,
                }
            } else {
                ItemState::Waiting {
                    attempts: r.get::<_, i64>(1)?.clamp(0, i64::from(u32::MAX)) as u32,
                    retry_ms: r.get::<_, Option<i64>>(3)?.unwrap_or(0),
                }
            })
        },
    )
    .optional()
    .ctx("distill_state", path)
}

/// When an item that gave nothing in `attempts` attempts is due again.
pub(crate) fn retry_after(attempts: i64, now_ms: i64) -> i64 {
    let pause = FIRST_RETRY_MS.saturating_mul(1i64 << (attempts - 1).clamp(0, 20));
    now_ms.saturating_add(pause.min(MAX_RETRY_MS))
}

/// Records the outcome of one attempt, inside the transaction that wrote its facts.
pub(crate) fn record(
    conn: &Connection,
    path: &std::path::Path,
    cold_item: i64,
    facts: u64,
    done: bool,
    now_ms: i64,
) -> Result<(), GraphError> {
    let attempts: i64 = conn
        .query_row(
            "SELECT attempts FROM distilled WHERE cold_item = ?1",
            [cold_item],
            |r| r.get(0),
        )
        .optional()
        .ctx("distill_record", path)?
        .unwrap_or(0)
        + 1;
    let retry = (!done).then(|| retry_after(attempts, now_ms));
    conn.execute(
        "INSERT INTO distilled (cold_item, state, attempts, facts, last_ms, retry_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (cold_item) DO UPDATE SET \
         state = excluded.state, attempts = excluded.attempts, facts = excluded.facts, \
         last_ms = excluded.last_ms, retry_ms = excluded.retry_ms",
        params![
            cold_item,
            if done { "done" } else { "empty" },
            attempts,
            i64::try_from(facts).unwrap_or(i64::MAX),
            now_ms,
            retry
        ],
    )
    .ctx("distill_record", path)
    .map(drop)
}

impl GraphStore {
    /// Where cold item `cold_item` stands; `None` if it was never distilled.
    pub fn distill_state(&self, cold_item: i64) -> Result<Option<ItemState>, GraphError> {
        state(self.conn(), self.path(), cold_item)
    }

    /// The newest cold item ever distilled (with a result or not): items after it are new
    /// material for the heartbeat. 0 when nothing was distilled yet.
    pub fn distill_cursor(&self) -> Result<i64, GraphError> {
        self.conn()
            .query_row(
                "SELECT coalesce(max(cold_item), 0) FROM distilled",
                [],
                |r| r.get(0),
            )
            .ctx("distill_cursor", self.path())
    }

    /// Up to `limit` items that gave nothing and are due again at `now_ms`, oldest due first.
    pub fn retry_due(&self, now_ms: i64, limit: usize) -> Result<Vec<i64>, GraphError> {
        const OP: &str = "retry_due";
        self.conn()
            .prepare_cached(
                "SELECT cold_item FROM distilled WHERE state = 'empty' AND retry_ms <= ?1 \
                 ORDER BY retry_ms, cold_item LIMIT +?2",
            )
            .ctx(OP, self.path())?
            .query_map(
                params![now_ms, i64::try_from(limit).unwrap_or(i64::MAX)],
                |r| r.get(0),
            )
            .ctx(OP, self.path())?
            .collect::<Result<_, _>>()
            .ctx(OP, self.path())
    }
}
