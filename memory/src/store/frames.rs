//! The `frames` table: the scheduler's suspended task frames as plain JSON, saved when a task
//! is suspended and removed when it resumes, so an interrupted task survives a restart.

use std::path::Path;

use rusqlite::{Row, params};
use serde_json::Value;

use super::error::{SqlContext, StoreError};
use super::{Store, StoreReader};

/// One suspended frame. `stack_pos` 0 is the bottom of the stack.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameRecord {
    /// The scheduler's id of the suspended task; one frame per task.
    pub task_id: u64,
    /// The journaled input the task is serving.
    pub request_id: String,
    /// The task's interrupt level, as the scheduler numbers it.
    pub level: u8,
    /// Times the task has been preempted, this suspension included.
    pub preempt_count: u32,
    /// The task's state, as JSON the runtime writes and reads back.
    pub frame: Value,
    /// Position in the suspended stack, 0 at the bottom.
    pub stack_pos: u32,
}

fn frame_from_row(op: &'static str, path: &Path, row: &Row<'_>) -> Result<FrameRecord, StoreError> {
    let get = |e| StoreError::sql(op, path, e);
    let task_id: i64 = row.get(0).map_err(get)?;
    let frame: String = row.get(4).map_err(get)?;
    Ok(FrameRecord {
        task_id: u64::try_from(task_id)
            .map_err(|_| StoreError::data(op, path, format!("task_id {task_id}")))?,
        request_id: row.get(1).map_err(get)?,
        level: row.get(2).map_err(get)?,
        preempt_count: row.get(3).map_err(get)?,
        frame: serde_json::from_str(&frame)
            .map_err(|e| StoreError::data(op, path, format!("frame: {e}")))?,
        stack_pos: row.get(5).map_err(get)?,
    })
}

impl Store {
    /// Saves (or replaces) the frame of `frame.task_id`; durable when it returns.
    pub fn frames_save(&mut self, frame: &FrameRecord, saved_ms: i64) -> Result<(), StoreError> {
        const OP: &str = "frames_save";
        let (conn, path) = self.conn_mut();
        let task_id = i64::try_from(frame.task_id)
            .map_err(|_| StoreError::data(OP, path, format!("task_id {}", frame.task_id)))?;
        let body = super::to_json(OP, path, &frame.frame)?;
        let tx = conn.savepoint().ctx(OP, path)?;
        tx.prepare_cached(
            "INSERT INTO frames (task_id, request_id, level, preempt_count, frame, stack_pos, saved_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
             ON CONFLICT (task_id) DO UPDATE SET request_id = excluded.request_id, \
             level = excluded.level, preempt_count = excluded.preempt_count, \
             frame = excluded.frame, stack_pos = excluded.stack_pos, saved_ms = excluded.saved_ms",
        )
        .ctx(OP, path)?
        .execute(params![
            task_id,
            frame.request_id,
            frame.level,
            frame.preempt_count,
            body,
            frame.stack_pos,
            saved_ms,
        ])
        .ctx(OP, path)?;
        tx.commit().ctx(OP, path)
    }

    /// Removes the frame of a resumed (or finished) task; `false` when there was none.
    pub fn frames_remove(&mut self, task_id: u64) -> Result<bool, StoreError> {
        const OP: &str = "frames_remove";
        let (conn, path) = self.conn_mut();
        let Ok(task_id) = i64::try_from(task_id) else {
            return Ok(false);
        };
        let tx = conn.savepoint().ctx(OP, path)?;
        let n = tx
            .execute("DELETE FROM frames WHERE task_id = ?1", [task_id])
            .ctx(OP, path)?;
        tx.commit().ctx(OP, path)?;
        Ok(n > 0)
    }
}

impl StoreReader {
    /// Every saved frame in stack order, bottom first (ties by task id).
    pub fn frames_load(&self) -> Result<Vec<FrameRecord>, StoreError> {
        const OP: &str = "frames_load";
        let path = &self.path;
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT task_id, request_id, level, preempt_count, frame, stack_pos \
                 FROM frames ORDER BY stack_pos, task_id",
            )
            .ctx(OP, path)?;
        let mut rows = stmt.query([]).ctx(OP, path)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().ctx(OP, path)? {
            out.push(frame_from_row(OP, path, row)?);
        }
        Ok(out)
    }
}
