//! hearthd — the Hearth daemon. Thin by design: parse the command line and the config, start
//! the daemon, wait for SIGTERM/SIGINT, stop so that every pending task gets its reply.

use anyhow::Context;
use clap::Parser;
use hearth_runtime::config::Config;
use hearth_runtime::daemon::Daemon;
use hearth_runtime::signals::ShutdownSignals;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(version, about = "Hearth agent kernel daemon")]
struct Args {
    /// Configuration file (every key optional).
    #[arg(long, short, env = "HEARTH_CONFIG")]
    config: Option<PathBuf>,
    /// Where Hearth keeps its state (overrides the file).
    #[arg(long, env = "HEARTH_DATA_DIR")]
    data_dir: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("HEARTH_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    // Everything hearthd creates is its user's alone, whatever umask it was started with.
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o077));
    // Before any thread starts, so every thread inherits the blocked mask.
    let signals = ShutdownSignals::install().context("blocking SIGTERM/SIGINT")?;
    let mut cfg = Config::load(args.config.as_deref()).context("loading the configuration")?;
    if let Some(dir) = args.data_dir {
        cfg.data_dir = dir;
    }
    let daemon = Daemon::start(cfg).context("starting hearthd")?;
    let signal = signals.wait().context("waiting for a shutdown signal")?;
    tracing::info!(%signal, "shutting down");
    daemon.shutdown();
    Ok(())
}
