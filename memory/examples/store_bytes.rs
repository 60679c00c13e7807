//! Where the bytes of `memory.db` go: replays turns through the store with the writes the
//! daemon makes per turn, then reports the file size per turn and, from SQLite's `dbstat`, the
//! bytes of every table and index.
//!
//! `cargo run --release -p hearth-memory --example store_bytes -- [turns] [dir]`
//!
//! Per turn, as the daemon writes them: the input is journaled (`journal_accept`), the turn's
//! event is appended by the memory service with the main model's 384-d vector, the reply is
//! journaled; every 10 turns the window's oldest events
//! beyond 40 are moved to cold context (full-text index) and the companion model's 384-d
//! vector of each moved entry is written (`cold_side_vectors`). Inputs are ~250 bytes of text,
//! replies ~250 bytes: ~0.5 KB of text per turn.

use std::error::Error;
use std::path::PathBuf;
use std::time::Instant;

use hearth_memory::{ColdMove, ContextEvent, DenseVector, EventRecord, Store};
use rusqlite::{Connection, OpenFlags};
use serde_json::json;

const DIM: usize = 384;
const WINDOW: usize = 40;

/// Deterministic prose-like text of about `len` bytes.
fn text(seed: u64, len: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "garden",
        "lamp",
        "evening",
        "kitchen",
        "tomorrow",
        "remember",
        "doctor",
        "appointment",
        "bicycle",
        "harbour",
        "letter",
        "winter",
        "coffee",
        "meeting",
        "library",
        "battery",
        "window",
        "recipe",
        "weekend",
        "birthday",
        "invoice",
        "train",
        "neighbour",
    ];
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = String::new();
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.push_str(WORDS[(state % WORDS.len() as u64) as usize]);
        out.push(' ');
    }
    out
}

fn vector(seed: u64) -> Vec<f32> {
    (0..DIM)
        .map(|i| (((seed + 1) * (i as u64 + 7)) % 1000) as f32 / 1000.0 - 0.5)
        .collect()
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let turns: u64 = args.next().map_or(Ok(1140), |s| s.parse())?;
    let dir = args.next().map_or_else(
        || std::env::temp_dir().join("hearth-store-bytes"),
        PathBuf::from,
    );
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("memory.db");
    let mut store = Store::open(&db)?;
    let started = Instant::now();
    for n in 0..turns {
        let ts = 1_700_000_000_000 + n as i64 * 1000;
        let input = text(n, 250);
        let reply = text(n + 1_000_000, 250);
        let id = format!("turn-{n}");
        store.journal_accept(&id, "cli", "input", &json!({ "text": input }), ts)?;
        let event = ContextEvent::new(ts, "cli", input).with_response(reply.clone());
        store.events_append(&[
            EventRecord::new(event).with_dense(DenseVector::new("main-fp", vector(n)))
        ])?;
        store.journal_reply(&id, &json!({ "text": reply }), ts + 500)?;
        if n % 10 == 9 {
            let window = store.events_window()?;
            let excess = window.len().saturating_sub(WINDOW);
            let moves: Vec<ColdMove> = window
                .into_iter()
                .take(excess)
                .map(|e| {
                    let text = format!("{} {}", e.record.event.input, e.record.event.response);
                    ColdMove {
                        event_id: e.id,
                        tokens: text.clone(),
                        text,
                    }
                })
                .collect();
            let ids = store.move_to_cold(&moves, "prune", ts)?;
            let side: Vec<(i64, DenseVector)> = ids
                .iter()
                .map(|&id| (id, DenseVector::new("companion-fp", vector(id as u64 + 7))))
                .collect();
            store.cold_set_side_dense(&side)?;
        }
    }
    let elapsed = started.elapsed();
    let wal = std::fs::metadata(dir.join("memory.db-wal")).map_or(0, |m| m.len());
    store.checkpoint()?;
    drop(store);
    let size = std::fs::metadata(&db)?.len();
    println!(
        "{turns} turns in {:.1} s; memory.db {size} bytes = {:.0} B/turn (WAL before checkpoint {wal} bytes)",
        elapsed.as_secs_f64(),
        size as f64 / turns as f64
    );

    let check = Instant::now();
    let health = Store::check(&db)?;
    println!(
        "Store::check (quick_check): {health} in {:.1} ms",
        check.elapsed().as_secs_f64() * 1e3
    );

    let conn = Connection::open_with_flags(&db, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = conn.prepare(
        "SELECT name, count(*), sum(pgsize), sum(payload), sum(unused) FROM dbstat \
         GROUP BY name ORDER BY sum(pgsize) DESC",
    )?;
    println!(
        "{:<34} {:>6} {:>10} {:>10} {:>9} {:>8}",
        "table / index", "pages", "bytes", "payload", "unused", "B/turn"
    );
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, i64>(4)?,
        ))
    })?;
    for row in rows {
        let (name, pages, bytes, payload, unused) = row?;
        println!(
            "{name:<34} {pages:>6} {bytes:>10} {payload:>10} {unused:>9} {:>8.0}",
            bytes as f64 / turns as f64
        );
    }
    let window: i64 = conn.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
    let cold: i64 = conn.query_row("SELECT count(*) FROM cold", [], |r| r.get(0))?;
    println!("rows: events {window}, cold {cold}");
    Ok(())
}
