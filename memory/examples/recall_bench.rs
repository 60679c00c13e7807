//! Runs the recall benchmark on a `hearth-recall/1` file with the installed dense model on one
//! core (keyword-only when it is not installed) and prints the report.
//!
//! `cargo run --release -p hearth-memory --example recall_bench -- <file> [k ...]`

use std::sync::Arc;

use hearth_memory::{Embedder, OnnxEmbedder, recall_bench};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: recall_bench <hearth-recall/1 file> [k ...]");
        std::process::exit(2);
    };
    let mut ks: Vec<usize> = args.filter_map(|a| a.parse().ok()).collect();
    if ks.is_empty() {
        ks = vec![1, 5, 10];
    }
    let embedder: Option<Arc<dyn Embedder>> = match OnnxEmbedder::locate_and_load(None, 1) {
        Ok(model) => Some(Arc::new(model)),
        Err(err) => {
            eprintln!("no dense model ({err}): keyword recall only");
            None
        }
    };
    match recall_bench::run(std::path::Path::new(&path), &ks, embedder, |line| {
        eprintln!("{line}")
    }) {
        Ok(report) => print!("{}", report.render()),
        Err(err) => {
            eprintln!("{err}");
            std::process::exit(1);
        }
    }
}
