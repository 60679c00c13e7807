//! `hearthd` assembled: configuration → LLM sources → the kernel graph → the client socket.
//! The binary only parses arguments and waits for a signal; everything else is here so tests
//! can run the same daemon in-process or as a child.

mod builtins;
mod data_dir;
mod sources;

pub use data_dir::{DataDir, LOCK_FILE};
pub use sources::{EMBEDDED_SOURCE, OLLAMA_LOOPBACK, Sources};

use crate::config::Config;
use crate::socket::{Control, SocketServer};
use hearth_kernel::durable::Durable;
use hearth_kernel::events::EventBus;
use hearth_kernel::graph::{self, GraphConfig, Kernel, Registries};
use hearth_kernel::ingress::KernelHandle;
use hearth_kernel::memory_service::MemoryConfig;
use hearth_kernel::turn::TurnConfig;
use hearth_llm::provider::SourceConfig;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DaemonError {
    #[error("data dir {path}: {source}")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
    #[error("another hearthd (pid {pid}) is using {path}")]
    Locked { pid: String, path: String },
    #[error("{0}")]
    Sources(String),
    #[error("memory store: {0}")]
    Store(String),
    #[error("starting the kernel: {0}")]
    Kernel(#[from] hearth_engine::EngineError),
    #[error("socket {path}: {source}")]
    Socket {
        path: String,
        source: std::io::Error,
    },
}

struct DaemonControl {
    handle: KernelHandle,
    sources: Arc<Sources>,
}

impl Control for DaemonControl {
    fn kernel(&self) -> &KernelHandle {
        &self.handle
    }

    fn status(&self) -> Value {
        let scheduler = self
            .handle
            .snapshot(Duration::from_secs(5))
            .map(|s| serde_json::to_value(s).unwrap_or_default());
        json!({"scheduler": scheduler, "sources": self.sources.status()})
    }

    fn sources(&self) -> Value {
        self.sources.status()
    }

    fn add_source(&self, source: SourceConfig) -> Result<String, String> {
        self.sources.add(source)
    }

    fn remove_source(&self, name: &str) -> Result<String, String> {
        self.sources.remove(name)
    }

    fn test_source(&self, name: &str) -> Result<String, String> {
        self.sources.test(name)
    }
}

pub struct Daemon {
    kernel: Kernel,
    socket: SocketServer,
    sources: Arc<Sources>,
    durable: Durable,
    grace: Duration,
    /// Held for the daemon's whole life; released last.
    _data_dir: DataDir,
}

impl std::fmt::Debug for Daemon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Daemon")
            .field("socket", &self.socket.path())
            .finish()
    }
}

impl Daemon {
    pub fn start(cfg: Config) -> Result<Self, DaemonError> {
        let data_dir = DataDir::lock(&cfg.data_dir)?;
        let sources = Sources::start(&cfg).map_err(DaemonError::Sources)?;
        let turn = TurnConfig {
            system_prompt: cfg.agent.system_prompt.clone(),
            max_tool_turns: cfg.agent.max_tool_turns,
            utc_offset_secs: cfg.agent.utc_offset_secs.unwrap_or(0),
            ..TurnConfig::default()
        };
        let graph_cfg = GraphConfig {
            workers: cfg.workers,
            turn,
            ..GraphConfig::default()
        };
        let registries = Registries::default();
        builtins::register(&registries.tools, cfg.agent.utc_offset_secs.unwrap_or(0));
        let events = EventBus::with_default_ring("hearth");
        let store_path = cfg.data_dir.join("memory.db");
        let (durable, recovered) = Durable::open(&store_path, events.clone())
            .map_err(|e| DaemonError::Store(e.to_string()))?;
        if !recovered.pending.is_empty() || !recovered.frames.is_empty() {
            tracing::info!(
                pending = recovered.pending.len(),
                suspended = recovered.frames.len(),
                "resuming work from before the restart"
            );
        }
        let journal = durable.clone();
        let kernel = graph::build_with(
            graph_cfg,
            sources.provider(),
            registries,
            events,
            Some((durable, recovered)),
            Some(MemoryConfig {
                store: store_path.clone(),
                model: cfg.memory_model,
                model_dir: cfg.memory_model_dir.clone(),
                max_context_size: cfg.agent.max_context_size,
                protected: hearth_memory::DEFAULT_PROTECTED_COUNT,
                utc_offset_secs: cfg.agent.utc_offset_secs.unwrap_or(0),
            }),
        )?;
        let control = Arc::new(DaemonControl {
            handle: kernel.handle(),
            sources: sources.clone(),
        });
        let path = cfg.socket_path();
        let socket = SocketServer::bind(
            &path,
            &cfg.data_dir,
            cfg.api_key.clone(),
            cfg.socket.clone(),
            control,
        )
        .map_err(|source| DaemonError::Socket {
            path: path.display().to_string(),
            source,
        })?;
        tracing::info!(socket = %path.display(), "hearthd ready");
        Ok(Self {
            kernel,
            socket,
            sources,
            durable: journal,
            grace: Duration::from_millis(cfg.socket.shutdown_grace_ms),
            _data_dir: data_dir,
        })
    }

    pub fn handle(&self) -> KernelHandle {
        self.kernel.handle()
    }

    pub fn socket_path(&self) -> &std::path::Path {
        self.socket.path()
    }

    /// Graceful stop: no new clients or requests, every pending task answered and journaled,
    /// every waiting client's terminal line written (within the grace period), the embedded
    /// server stopped, and only then the data dir released.
    pub fn shutdown(self) {
        self.socket.stop_accepting();
        let report = self.kernel.shutdown();
        if !self.durable.flush(self.grace) {
            tracing::warn!("the journal did not confirm its last writes in time");
        }
        self.socket.finish(self.grace);
        self.sources.shutdown();
        tracing::info!(joined = report.all_joined(), "hearthd stopped");
    }
}
