//! `hearth bench knowledge FILE`: the knowledge base's search on a recall set's sessions as
//! documents (see `hearth_knowledge::bench`), beside keywords alone and plain BM25.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// Arguments of `hearth bench knowledge`.
#[derive(Args, Debug)]
pub struct KnowledgeArgs {
    /// The data set (format `hearth-recall/1`): each session becomes a document.
    file: PathBuf,
    /// The k values to report.
    #[arg(long, value_delimiter = ',', default_value = "1,5,10")]
    k: Vec<usize>,
    /// The dense floors to measure (the knowledge base's lowest cosine of a match by meaning).
    #[arg(long, value_delimiter = ',', default_value = "0.3")]
    floors: Vec<f32>,
    /// Keywords only (no embedding model loaded).
    #[arg(long)]
    no_model: bool,
    /// Where `make setup` put the embedding model (default: the user cache dir).
    #[arg(long)]
    model_dir: Option<PathBuf>,
    /// Also write the report as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// Runs the benchmark and prints its table.
pub fn run(args: &KnowledgeArgs) -> ExitCode {
    let dense = if args.no_model {
        None
    } else {
        hearth_memory::MemoryModels::load(args.model_dir.clone(), 1).dense
    };
    let scratch =
        std::env::temp_dir().join(format!("hearth-knowledge-bench-{}", std::process::id()));
    let report =
        hearth_knowledge::bench::run(&args.file, &args.k, dense, &args.floors, &scratch, |line| {
            eprintln!("knowledge: {line}")
        });
    let _ = std::fs::remove_dir_all(&scratch);
    match report {
        Ok(report) => {
            outln!("{}", report.render());
            if let Some(path) = &args.json {
                let text = serde_json::to_string_pretty(&report.to_json()).unwrap_or_default();
                if let Err(e) = std::fs::write(path, text) {
                    eprintln!("hearth: {}: {e}", path.display());
                    return ExitCode::from(1);
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hearth: {e}");
            ExitCode::from(1)
        }
    }
}
