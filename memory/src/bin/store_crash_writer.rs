//! Writer half of the memory store's crash test (`memory/tests/store_crash.rs`).
//!
//! `store_crash_writer <db path> <tag> [max seconds]` opens the store, first replies to every input a previous
//! run accepted but never answered (printing `REPLIED <id>`), then loops until it is killed:
//! journal an input `<tag>-<n>`, print `ACK <tag>-<n>` once `journal_accept` has returned,
//! append the turn's event to the window (every tenth turn moving the oldest events to cold
//! context), journal the reply and print `REPLIED <tag>-<n>`. A line is printed only after the
//! write it announces is durable, so whatever the test reads must survive the kill. It exits by
//! itself after `max seconds` (default 30), so a test that dies first leaves no writer behind.

use hearth_engine::now_ms;
use std::error::Error;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use hearth_memory::{ColdMove, ContextEvent, DenseVector, EventRecord, Store};
use serde_json::json;

fn say(out: &mut impl Write, what: &str, id: &str) -> io::Result<()> {
    writeln!(out, "{what} {id}")?;
    out.flush()
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(tag)) = (args.next(), args.next()) else {
        return Err("usage: store_crash_writer <db path> <tag> [max seconds]".into());
    };
    let max_secs: u64 = args.next().map_or(Ok(30), |s| s.parse())?;
    let stop_at = Instant::now() + Duration::from_secs(max_secs);
    let mut store = Store::open(&path)?;
    let mut out = io::stdout().lock();

    for pending in store.journal_pending()? {
        let reply = json!({ "resumed": true, "payload": pending.payload });
        store.journal_reply(&pending.request_id, &reply, now_ms())?;
        say(&mut out, "REPLIED", &pending.request_id)?;
    }

    for n in (0u64..).take_while(|_| Instant::now() < stop_at) {
        let id = format!("{tag}-{n}");
        let text = format!("input {id}");
        store.journal_accept(
            &id,
            "crash-test",
            "input",
            &json!({ "seq": n, "text": text }),
            now_ms(),
        )?;
        say(&mut out, "ACK", &id)?;

        let event =
            ContextEvent::new(now_ms(), "crash-test", text).with_response(format!("reply {id}"));
        let dense = DenseVector::new("crash-fp", vec![n as f32; 16]);
        store.event_append(&EventRecord::new(event).with_dense(dense))?;
        if n % 10 == 9 {
            let moves: Vec<ColdMove> = store
                .events_window()?
                .into_iter()
                .take(5)
                .map(|e| ColdMove {
                    event_id: e.id,
                    tokens: e.record.event.input.clone(),
                    text: e.record.event.input,
                })
                .collect();
            store.move_to_cold(&moves, "prune", now_ms())?;
        }

        store.journal_reply(
            &id,
            &json!({ "seq": n, "text": format!("reply {id}") }),
            now_ms(),
        )?;
        say(&mut out, "REPLIED", &id)?;
    }
    Ok(())
}
