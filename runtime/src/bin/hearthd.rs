//! hearthd — the Hearth daemon. Thin by design: parse the command line, start the kernel graph,
//! wait for SIGTERM/SIGINT, shut down so that every pending task gets its reply.

use anyhow::Context;
use clap::Parser;
use hearth_runtime::graph::{self, GraphConfig, Registries};
use hearth_runtime::provider::Unconfigured;
use hearth_runtime::signals::ShutdownSignals;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser, Debug)]
#[command(version, about = "Hearth agent kernel daemon")]
struct Args {
    /// Where Hearth keeps its state.
    #[arg(long, env = "HEARTH_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long, env = "HEARTH_WORKERS")]
    workers: Option<usize>,
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    // Before any thread starts, so every thread inherits the blocked mask.
    let signals = ShutdownSignals::install().context("blocking SIGTERM/SIGINT")?;
    if let Some(dir) = &args.data_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating data dir {}", dir.display()))?;
    }
    let cfg = GraphConfig { workers: args.workers, ..GraphConfig::default() };
    let kernel = graph::build(cfg, Arc::new(Unconfigured), Registries::default()).context("starting the kernel graph")?;
    tracing::info!(workers = kernel.engine().worker_count(), "hearthd ready");
    let signal = signals.wait().context("waiting for a shutdown signal")?;
    tracing::info!(%signal, "shutting down");
    let report = kernel.shutdown();
    tracing::info!(joined = report.all_joined(), "hearthd stopped");
    Ok(())
}
