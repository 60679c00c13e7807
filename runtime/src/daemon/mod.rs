//! `hearthd` assembled: configuration → LLM sources → the kernel graph → the client socket.
//! The binary only parses arguments and waits for a signal; everything else is here so tests
//! can run the same daemon in-process or as a child.

mod audit;
mod builtins;
mod bundled_plugins;
mod channel_replies;
mod data_dir;
mod mcp_servers;
mod memory_control;
mod plugin_accept;
mod plugins;
mod settings;
mod settings_service;
mod source_error;
mod sources;
pub mod systemd;
mod wedge_hook;

pub use data_dir::{DataDir, LOCK_FILE};
pub use memory_control::{ENTRY_PREFIX, WINDOW_PREFIX};
pub use settings::{effective as effective_config, open as open_settings};
pub use settings_service::{LiveParts, SettingsOp, SettingsService, SettingsServiceError};
pub use source_error::SourceError;
pub use sources::{EMBEDDED_SOURCE, OLLAMA_LOOPBACK, Sources};

use crate::config::Config;
use crate::socket::{Control, ControlError, SocketServer};
use hearth_kernel::durable::Durable;
use hearth_kernel::graph::{self, GraphConfig, Kernel, Registries};
use hearth_kernel::ingress::KernelHandle;
use hearth_kernel::memory_service::MemoryConfig;
use hearth_kernel::turn::TurnConfig;
use hearth_llm::provider::SourceConfig;
use hearth_mcp::McpServers;
use hearth_plugin_host::session::Tables;
use hearth_plugin_host::{HostConfig, PluginHost};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DaemonError {
    /// The data dir could not be created, made private (0700) or its lock file written.
    #[error("data dir {path}: {source}")]
    DataDir {
        /// The data dir.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Another daemon holds the data dir's lock.
    #[error("another hearthd (pid {pid}) is using {path}")]
    Locked {
        /// The holder's pid, as read from the lock file (may be empty).
        pid: String,
        /// The data dir.
        path: String,
    },
    /// The LLM sources could not be set up (bundled adapters not installed, `sources.json`
    /// unreadable).
    #[error("{0}")]
    Sources(String),
    /// The memory store (`<data_dir>/memory.db`) could not be opened.
    #[error("memory store: {0}")]
    Store(String),
    /// The kernel graph failed to start.
    #[error("starting the kernel: {0}")]
    Kernel(#[from] hearth_engine::EngineError),
    /// The plugin host failed to start.
    #[error("plugins: {0}")]
    Plugins(#[from] hearth_plugin_host::PluginError),
    /// `<data_dir>/settings.db` could not be opened, or its values do not apply to the
    /// configuration.
    #[error("settings: {0}")]
    Settings(String),
    /// The client socket could not be bound.
    #[error("socket {path}: {source}")]
    Socket {
        /// The socket's path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

struct DaemonControl {
    handle: KernelHandle,
    sources: Arc<Sources>,
    plugins: Arc<PluginHost>,
    mcp: Arc<McpServers>,
    /// hearth.toml's `[[mcp]]`, which a sync keeps ahead of the servers `hearth mcp` kept.
    mcp_configured: Vec<hearth_mcp::McpServerConfig>,
    memory: Option<hearth_kernel::memory_service::MemoryService>,
    settings: SettingsService,
    data_dir: std::path::PathBuf,
    /// The user's zone and where it came from, for `hearth status`.
    zone: crate::zone::UserZone,
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
        json!({
            "scheduler": scheduler,
            "sources": self.sources.status(),
            "embedded_server": self.sources.embedded_status(),
            "plugins": self.plugins.list(),
            "mcp": self.mcp.list(),
            "zone": self.zone.status(hearth_engine::now_ms()),
        })
    }

    fn sources(&self) -> Value {
        self.sources.status()
    }

    fn add_source(&self, source: SourceConfig) -> Result<String, ControlError> {
        self.sources.add(source).map_err(ControlError::Source)
    }

    fn remove_source(&self, name: &str) -> Result<String, ControlError> {
        self.sources.remove(name).map_err(ControlError::Source)
    }

    fn test_source(&self, name: &str) -> Result<String, ControlError> {
        self.sources.test(name).map_err(ControlError::Source)
    }

    fn plugin(&self, action: &str, name: Option<&str>) -> Result<Value, ControlError> {
        let host = &self.plugins;
        let name =
            || name.ok_or_else(|| ControlError::Invalid(format!("plugin {action} needs a name")));
        let done = |r: Result<(), hearth_plugin_host::PluginError>| {
            r.map(|()| json!({"ok": true})).map_err(ControlError::from)
        };
        match action {
            "list" => Ok(host.list()),
            "info" => Ok(host.info(name()?)?),
            "install" => {
                let installed = host.install(std::path::Path::new(name()?))?;
                // Its manifest's settings become known at once, not at the next start.
                self.settings.define_plugins(&self.data_dir.join("plugins"));
                Ok(json!({"installed": installed}))
            }
            "enable" => done(host.enable(name()?)),
            "disable" => done(host.disable(name()?)),
            "reload" => done(host.reload(name()?)),
            "remove" => done(host.remove(name()?)),
            other => Err(ControlError::Invalid(format!(
                "unknown plugin action {other:?} (list, info, install, enable, disable, reload, remove)"
            ))),
        }
    }

    fn mcp(&self, action: &str) -> Result<Value, ControlError> {
        match action {
            "sync" => Ok(self
                .mcp
                .sync(&mcp_servers::entries(&self.mcp_configured, &self.data_dir))),
            other => Err(ControlError::Invalid(format!(
                "unknown mcp action {other:?} (sync)"
            ))),
        }
    }

    fn memory(
        &self,
        action: &str,
        arg: Option<&str>,
        k: Option<usize>,
    ) -> Result<Value, ControlError> {
        memory_control::memory(self.memory.as_ref(), &self.zone.zone, action, arg, k)
    }

    fn settings(&self, op: SettingsOp) -> Result<Value, ControlError> {
        Ok(self.settings.serve(op)?)
    }
}

/// A running `hearthd`: the locked data dir, the LLM sources, the kernel, plugins, MCP servers
/// and the client socket; stop it with [`Daemon::shutdown`].
pub struct Daemon {
    kernel: Kernel,
    socket: SocketServer,
    sources: Arc<Sources>,
    durable: Durable,
    grace: Duration,
    /// Held for the daemon's whole life; released last.
    _data_dir: DataDir,
    plugins: Arc<PluginHost>,
    mcp: Arc<McpServers>,
    /// Lua script plugins; dropped with the daemon, which removes their tools.
    _lua: Vec<hearth_lua_plugins::LuaPlugin>,
}

impl std::fmt::Debug for Daemon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Daemon")
            .field("socket", &self.socket.path())
            .finish()
    }
}

impl Daemon {
    /// Locks the data dir, applies `settings.db` over `base`, and starts the sources, kernel,
    /// plugins and client socket (resuming journaled work from before a restart).
    pub fn start(base: Config) -> Result<Self, DaemonError> {
        let data_dir = DataDir::lock(&base.data_dir)?;
        // The daemon owns settings.db; the user's values there win over hearth.toml.
        let registry =
            Arc::new(settings::open(&base).map_err(|e| DaemonError::Settings(e.to_string()))?);
        let cfg = settings::effective(&base, &registry, None).map_err(DaemonError::Settings)?;
        let sources = Sources::start(&cfg).map_err(DaemonError::Sources)?;
        if let Err(e) = sources.prefer(&cfg.agent.source) {
            tracing::warn!("agent.source ignored: {e}");
        }
        let user_zone = crate::zone::UserZone::resolve(cfg.agent.utc_offset_secs);
        let zone = user_zone.zone.clone();
        match &user_zone.source {
            crate::zone::ZoneSource::Fallback(why) => {
                tracing::warn!("{why}; days are reckoned in UTC (set agent.utc_offset_secs)");
            }
            source => tracing::info!(
                utc_offset_secs = zone.offset_at(hearth_engine::now_ms()),
                ?source,
                "the user's zone"
            ),
        }
        let turn = TurnConfig {
            system_prompt: cfg.agent.system_prompt.clone(),
            max_tool_turns: cfg.agent.max_tool_turns,
            zone: zone.clone(),
            // Validated with the rest of the config; an unreadable value means auto.
            language: cfg.agent.language().ok().flatten(),
            ..TurnConfig::default()
        };
        let graph_cfg = GraphConfig {
            workers: cfg.workers,
            turn,
            ..GraphConfig::default()
        };
        let registries = Registries::default();
        builtins::register(&registries.tools, zone.clone());
        wedge_hook::install(&registries.stages);
        let (data_plane, events) = plugins::shared_events()?;
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
                prune_slack: cfg.agent.prune_slack,
                protected: hearth_memory::DEFAULT_PROTECTED_COUNT,
                zone: zone.clone(),
                journal_keep: (cfg.journal_keep_days > 0).then(|| {
                    std::time::Duration::from_secs(cfg.journal_keep_days.saturating_mul(86_400))
                }),
                knowledge: Some(hearth_kernel::knowledge_tools::KnowledgeSettings {
                    root: cfg.data_dir.join("knowledge"),
                    index: cfg.data_dir.join("knowledge.db"),
                }),
                graph: Some(hearth_kernel::graph_service::GraphSettings {
                    path: cfg.data_dir.join("graph.db"),
                    interval: std::time::Duration::from_secs(cfg.graph_heartbeat_secs.max(1)),
                    model: (cfg.graph_model_secs > 0).then(|| {
                        hearth_kernel::model_distill::ModelDistillSettings {
                            interval: std::time::Duration::from_secs(cfg.graph_model_secs),
                            min_idle: std::time::Duration::from_secs(cfg.graph_model_idle_secs),
                            merge_interval: std::time::Duration::from_secs(
                                cfg.graph_merge_secs.max(1),
                            ),
                        }
                    }),
                    scene_half_life: (cfg.graph_scene_half_life_secs > 0)
                        .then(|| std::time::Duration::from_secs(cfg.graph_scene_half_life_secs)),
                }),
            }),
        )?;
        let registries = kernel.registries();
        let tables = Tables {
            tools: registries.tools.clone(),
            stages: registries.stages.clone(),
            outputs: registries.outputs.clone(),
        };
        let port = Arc::new(plugins::KernelPlugins {
            handle: kernel.handle(),
            events: kernel.events().clone(),
            tools: tables.tools.clone(),
            sources: sources.clone(),
            durable: journal.clone(),
            replies: Default::default(),
            audit: audit::AuditLog::new(&cfg.data_dir),
            memory: kernel.memory(),
            kernel_tools: tables.tools.defs().into_iter().map(|d| d.name).collect(),
            control: Default::default(),
        });
        if cfg.bundled_plugins {
            let installed = bundled_plugins::install(&cfg.data_dir);
            if !installed.is_empty() {
                tracing::info!(?installed, "installed the bundled plugins");
            }
        }
        let mut host_cfg = HostConfig::new(&cfg.data_dir);
        host_cfg.data_plane = Some(data_plane);
        host_cfg.settings = Some(registry.clone());
        let plugins = PluginHost::open(host_cfg, tables, port.clone())?;
        registries.tools.set_policy(cfg.tools.clone());
        let mcp = Arc::new(McpServers::new(
            plugins.supervisor().clone(),
            registries.tools.clone(),
        ));
        let control = Arc::new(DaemonControl {
            handle: kernel.handle(),
            sources: sources.clone(),
            plugins: plugins.clone(),
            mcp: mcp.clone(),
            mcp_configured: cfg.mcp.clone(),
            memory: kernel.memory(),
            settings: SettingsService::new(
                registry,
                base,
                Some(LiveParts {
                    tools: registries.tools.clone(),
                    plugins: plugins.clone(),
                    sources: sources.clone(),
                }),
            ),
            data_dir: cfg.data_dir.clone(),
            zone: user_zone,
        });
        let _ = port.control.set(control.clone());
        // Skills and Lua scripts load in the daemon's process in milliseconds (a script's run
        // is bounded by its instruction budget): their tools are registered before the first
        // client is served, so a turn right after start-up sees them.
        let (skills, _skipped) = hearth_skills::load_dir(&cfg.data_dir.join("skills"));
        hearth_skills::register_skill_auto_load(&registries.stages, skills.clone());
        if let Err(e) = hearth_skills::register_skill_load(&registries.tools, skills) {
            tracing::error!("skills not offered: {e}");
        }
        let lua_host = plugins.in_process_host();
        let lua: Vec<_> = plugins
            .scripts()
            .iter()
            .filter_map(hearth_lua_plugins::LuaPluginConfig::from_manifest)
            .filter_map(|script| {
                hearth_lua_plugins::LuaPlugin::start(script, &lua_host)
                    .inspect_err(|e| tracing::error!("{e}"))
                    .ok()
            })
            .collect();
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
        // Served first: plugins start in the background, in their dependency order.
        match plugins.start_all() {
            Ok(order) => tracing::info!(?order, "starting plugins"),
            Err(e) => tracing::error!("no plugin started: {e}"),
        }
        mcp.start_all(&mcp_servers::entries(&cfg.mcp, &cfg.data_dir));
        Ok(Self {
            kernel,
            socket,
            sources,
            durable: journal,
            grace: Duration::from_millis(cfg.socket.shutdown_grace_ms),
            _data_dir: data_dir,
            plugins,
            mcp,
            _lua: lua,
        })
    }

    /// A handle for submitting input to the running kernel.
    pub fn handle(&self) -> KernelHandle {
        self.kernel.handle()
    }

    /// Where the client socket listens.
    pub fn socket_path(&self) -> &std::path::Path {
        self.socket.path()
    }

    /// Graceful stop: no new clients or requests, every pending task answered and journaled,
    /// every waiting client's terminal line written (within the grace period), the embedded
    /// server stopped, and only then the data dir released.
    pub fn shutdown(self) {
        self.socket.stop_accepting();
        // Every child stops before the kernel (and the segment it maps) goes away.
        self.mcp.stop_all();
        self.plugins.shutdown();
        let report = self.kernel.shutdown();
        // The kernel's shutdown closed the store already; this bounds it by the grace period.
        if !self.durable.close(self.grace) {
            tracing::warn!("the journal did not confirm its last writes in time");
        }
        self.socket.finish(self.grace);
        self.sources.shutdown();
        // An embedding model still loading must finish before the process exits: its runtime's
        // global destructors would otherwise run under the loader.
        if !hearth_kernel::wait_for_model_loads(self.grace) {
            tracing::warn!("an embedding model was still loading at exit");
        }
        tracing::info!(joined = report.all_joined(), "hearthd stopped");
    }
}
