//! hearthd — the Hearth daemon. Thin by design: parse the command line and the config, start
//! the daemon, wait for SIGTERM/SIGINT, stop so that every pending task gets its reply.

use anyhow::Context;
use clap::Parser;
use hearth_runtime::config::Config;
use hearth_runtime::daemon::Daemon;
use hearth_runtime::daemon::systemd::{self, Notifier, Watchdog};
use hearth_runtime::signals::ShutdownSignals;
use std::path::PathBuf;
use std::sync::Arc;

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
    let service = Service::start(&daemon);
    // The word segmenter builds its dictionary (~0.2 s, seconds in a debug build) on first use,
    // the store owner's first window append or keyword recall. Built here, on a thread with
    // nothing else to do, so neither the user's first turn nor the acknowledgement of the
    // inputs queued behind it waits for it; a shutdown signal meanwhile stays pending.
    hearth_memory::tokens::jieba();
    let signal = signals.wait().context("waiting for a shutdown signal")?;
    tracing::info!(%signal, "shutting down");
    service.stopping();
    daemon.shutdown();
    Ok(())
}

/// The systemd side of the daemon's life (nothing without `NOTIFY_SOCKET`).
struct Service {
    notifier: Option<Arc<Notifier>>,
    watchdog: Option<Watchdog>,
}

impl Service {
    /// `READY=1` (the socket accepts now), then the watchdog, probing the kernel itself.
    fn start(daemon: &Daemon) -> Service {
        let env = |k: &str| std::env::var(k).ok();
        let notifier = match Notifier::from_env(env) {
            None => None,
            Some(Ok(n)) => Some(Arc::new(n)),
            Some(Err(e)) => {
                tracing::warn!("NOTIFY_SOCKET is unusable: {e}");
                None
            }
        };
        let Some(notifier) = notifier else {
            return Service {
                notifier: None,
                watchdog: None,
            };
        };
        let ready = format!(
            "READY=1\n{}",
            systemd::status(&format!("serving {}", daemon.socket_path().display()))
        );
        if let Err(e) = notifier.notify(&ready) {
            tracing::warn!("telling systemd hearthd is ready: {e}");
        }
        let handle = daemon.handle();
        let watchdog = systemd::watchdog_period(env).and_then(|period| {
            let probe = move |wait| {
                let s = handle.snapshot(wait)?;
                Some(format!(
                    "serving; {} queued, {} interrupts pending, {}",
                    s.queue.len(),
                    s.pending_interrupts,
                    if s.running.is_some() {
                        "a task running"
                    } else {
                        "idle"
                    }
                ))
            };
            Watchdog::start(notifier.clone(), period, probe)
                .inspect_err(|e| tracing::warn!("starting the watchdog: {e}"))
                .ok()
        });
        Service {
            notifier: Some(notifier),
            watchdog,
        }
    }

    /// `STOPPING=1`: the pings end first, so the shutdown is judged by `TimeoutStopSec`.
    fn stopping(self) {
        if let Some(w) = self.watchdog {
            w.stop();
        }
        if let Some(n) = self.notifier {
            let msg = format!(
                "STOPPING=1\n{}",
                systemd::status("stopping: answering what is queued")
            );
            if let Err(e) = n.notify(&msg) {
                tracing::warn!("telling systemd hearthd is stopping: {e}");
            }
        }
    }
}
