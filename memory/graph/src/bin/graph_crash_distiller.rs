//! Distills synthetic cold items into the graph at `argv[1]` in a loop, one transaction each,
//! printing each committed item's id, until killed. The crash test SIGKILLs it mid-loop and
//! checks the reopened graph: nothing lost, nothing duplicated, no half-written item.

use hearth_graph::{ColdItem, GraphStore};

/// The cold item the loop writes as number `i`: a fact that changes each time, one that
/// repeats (merged), and a dated event.
pub fn item(i: i64) -> ColdItem {
    ColdItem {
        id: i,
        turn_id: format!("turn-{i}"),
        said_ms: 1_700_000_000_000 + i * 60_000,
        text: format!(
            "I moved to City{i} yesterday. I like tea. My friend Friend{} lives in Town{i}.",
            i % 7
        ),
        utc_offset_secs: 0,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(first)) = (args.next(), args.next()) else {
        eprintln!("usage: graph_crash_distiller <graph.db> <first item id>");
        std::process::exit(2);
    };
    let first: i64 = first.parse().unwrap_or(1);
    let mut graph = match GraphStore::open(&path) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    for i in first.. {
        if let Err(e) = graph.distill_items(&[item(i)]) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        println!("{i}");
    }
}
