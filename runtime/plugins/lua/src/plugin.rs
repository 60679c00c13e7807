//! A running Lua plugin: its script on a thread of its own, its tools in the registry, the
//! crash policy over failed calls, and a reload when the file changes.

use crate::LuaPluginError;
use crate::script::{Script, ToolDecl};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};
use hearth_llm::adapter::AdapterLimits;
use hearth_plugin_host::{CrashHistory, Manifest, RestartDecision, RestartPolicy};
use hearth_stages::{
    CallContext, DEFAULT_CAPABILITY, HandlerError, ToolDef, ToolHandler, ToolOwner, ToolRegistry,
    ToolSource,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// How often the plugin's thread looks at its file when no call is running.
pub const RELOAD_POLL: Duration = Duration::from_millis(250);

/// Calls queued for one plugin beyond the one running.
const QUEUE: usize = 16;

/// How one Lua plugin runs.
#[derive(Clone, Debug)]
pub struct LuaPluginConfig {
    /// The plugin's name: its tools are owned by `lua:<name>`.
    pub name: String,
    /// The script (`main.lua`).
    pub entry: PathBuf,
    /// Memory limit and the budget of one call.
    pub limits: AdapterLimits,
    /// When a failing script is stopped (the process plugins' rule).
    pub policy: RestartPolicy,
    /// How often the file is checked for a change.
    pub reload_poll: Duration,
}

impl LuaPluginConfig {
    /// The config of a plugin whose manifest's entry is a `.lua` file; `None` for a process.
    pub fn from_manifest(manifest: &Manifest) -> Option<LuaPluginConfig> {
        let lua = manifest.entry.extension().is_some_and(|e| e == "lua");
        lua.then(|| LuaPluginConfig::new(&manifest.name, &manifest.entry))
    }

    /// Defaults for script `entry` of plugin `name`.
    pub fn new(name: &str, entry: &Path) -> LuaPluginConfig {
        LuaPluginConfig {
            name: name.to_owned(),
            entry: entry.to_owned(),
            limits: AdapterLimits::default(),
            policy: RestartPolicy::default(),
            reload_poll: RELOAD_POLL,
        }
    }

    fn file_name(&self) -> String {
        self.entry
            .file_name()
            .map_or_else(|| "main.lua".into(), |f| f.to_string_lossy().into_owned())
    }

    fn read(&self) -> Result<(String, Option<SystemTime>), LuaPluginError> {
        let source =
            std::fs::read_to_string(&self.entry).map_err(|source| LuaPluginError::Read {
                plugin: self.name.clone(),
                path: self.entry.clone(),
                source,
            })?;
        Ok((source, modified(&self.entry)))
    }

    fn load(&self) -> Result<(Script, Vec<ToolDecl>, Option<SystemTime>), LuaPluginError> {
        let (source, mtime) = self.read()?;
        let file = self.file_name();
        let (script, decls) =
            Script::load(&self.name, &file, &source, self.limits).map_err(|message| {
                LuaPluginError::Load {
                    plugin: self.name.clone(),
                    file,
                    message,
                }
            })?;
        Ok((script, decls, mtime))
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

struct Job {
    tool: String,
    args: Value,
    ctx: Value,
    reply: Sender<Result<Value, HandlerError>>,
}

/// A tool of a Lua plugin, as the registry calls it: the call goes to the plugin's thread.
struct LuaTool {
    plugin: String,
    tool: String,
    jobs: Sender<Job>,
    /// The call's time limit plus the grace for a library call that never reaches the hook.
    wait: Duration,
}

impl ToolHandler for LuaTool {
    fn call(&self, call: &CallContext, args: &Value) -> Result<Value, HandlerError> {
        let stopped =
            || HandlerError::Unavailable(format!("lua plugin {} is stopped", self.plugin));
        let (reply, answer) = bounded(1);
        let ctx = json!({"task": call.task_id(), "trust": call.trust().as_str()});
        let job = Job {
            tool: self.tool.clone(),
            args: args.clone(),
            ctx,
            reply,
        };
        self.jobs.try_send(job).map_err(|_| stopped())?;
        match answer.recv_timeout(
            self.wait
                .min(call.remaining())
                .max(Duration::from_millis(1)),
        ) {
            Ok(result) => result,
            Err(RecvTimeoutError::Timeout) => Err(HandlerError::TimedOut),
            Err(RecvTimeoutError::Disconnected) => Err(stopped()),
        }
    }
}

/// A started Lua plugin; dropping it stops the script and removes its tools.
pub struct LuaPlugin {
    name: String,
    owner: ToolOwner,
    registry: Arc<ToolRegistry>,
    /// Dropped to stop the thread.
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for LuaPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LuaPlugin")
            .field("name", &self.name)
            .finish()
    }
}

/// Puts `decls` in the registry as `owner`'s tools, replacing the previous ones at once.
fn publish(
    registry: &ToolRegistry,
    owner: &ToolOwner,
    cfg: &LuaPluginConfig,
    decls: &[ToolDecl],
    jobs: &Sender<Job>,
) {
    let wait = cfg.limits.wall + cfg.limits.grace;
    let tools = decls
        .iter()
        .map(|d| {
            let def = ToolDef {
                name: d.name.clone(),
                plugin: cfg.name.clone(),
                description: d.description.clone(),
                parameters: d.parameters.clone(),
                ..ToolDef::default()
            };
            let handler: Arc<dyn ToolHandler> = Arc::new(LuaTool {
                plugin: cfg.name.clone(),
                tool: d.name.clone(),
                jobs: jobs.clone(),
                wait,
            });
            (def, DEFAULT_CAPABILITY.to_owned(), handler)
        })
        .collect();
    for refused in registry.replace_owned(owner, tools) {
        tracing::error!(plugin = %cfg.name, "lua plugin tool refused: {refused}");
    }
}

impl LuaPlugin {
    /// Loads the script on a new thread and registers its tools in `registry`. A script that
    /// does not load is an error here and registers nothing.
    pub fn start(
        cfg: LuaPluginConfig,
        registry: Arc<ToolRegistry>,
    ) -> Result<LuaPlugin, LuaPluginError> {
        let owner = ToolOwner::new(ToolSource::Lua, &cfg.name);
        let (jobs, inbox) = bounded::<Job>(QUEUE);
        let (started_tx, started) = bounded(1);
        let name = cfg.name.clone();
        let (stop, stopped) = bounded::<()>(0);
        let (thread_registry, thread_owner, thread_jobs) =
            (Arc::clone(&registry), owner.clone(), jobs.clone());
        let thread = std::thread::Builder::new()
            .name(format!("hearth-lua-{name}"))
            .spawn(move || {
                let loaded = cfg.load();
                let (script, decls, mtime) = match loaded {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = started_tx.send(Err(e));
                        return;
                    }
                };
                publish(&thread_registry, &thread_owner, &cfg, &decls, &thread_jobs);
                let _ = started_tx.send(Ok(()));
                let ends = Ends {
                    registry: &thread_registry,
                    owner: &thread_owner,
                    jobs: &thread_jobs,
                    inbox: &inbox,
                    stopped: &stopped,
                };
                run(&cfg, &ends, script, mtime);
            })
            .map_err(|source| LuaPluginError::Thread {
                plugin: name.clone(),
                source,
            })?;
        let plugin = LuaPlugin {
            name,
            owner,
            registry,
            stop: Some(stop),
            thread: Some(thread),
        };
        match started.recv() {
            Ok(Ok(())) => Ok(plugin),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(LuaPluginError::Load {
                plugin: plugin.name.clone(),
                file: String::new(),
                message: "the plugin thread ended while loading".into(),
            }),
        }
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the script still runs (false once the crash policy stopped it).
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for LuaPlugin {
    fn drop(&mut self) {
        self.registry.unregister_owner(&self.owner);
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What the plugin's thread works with.
struct Ends<'a> {
    registry: &'a ToolRegistry,
    owner: &'a ToolOwner,
    /// For the handlers of tools a reload declares.
    jobs: &'a Sender<Job>,
    inbox: &'a Receiver<Job>,
    /// Disconnected when the plugin is dropped.
    stopped: &'a Receiver<()>,
}

/// The plugin's thread: calls, the crash policy, reloads.
fn run(cfg: &LuaPluginConfig, ends: &Ends<'_>, mut script: Script, mut mtime: Option<SystemTime>) {
    let mut history = CrashHistory::default();
    // Checked on a clock of its own: a plugin called more often than the poll interval would
    // otherwise never reach an idle timeout, and never reload.
    let mut next_check = Instant::now() + cfg.reload_poll;
    loop {
        if Instant::now() >= next_check {
            next_check = Instant::now() + cfg.reload_poll;
            let now = modified(&cfg.entry);
            if now != mtime {
                mtime = now;
                match cfg.load() {
                    Ok((fresh, decls, at)) => {
                        script = fresh;
                        mtime = at;
                        history.reset();
                        publish(ends.registry, ends.owner, cfg, &decls, ends.jobs);
                        tracing::info!(plugin = %cfg.name, tools = decls.len(), "lua plugin reloaded");
                    }
                    Err(e) => tracing::error!("{e}; the previous version keeps running"),
                }
            }
        }
        let until_check = next_check.saturating_duration_since(Instant::now());
        crossbeam_channel::select! {
            recv(ends.inbox) -> job => {
                let Ok(job) = job else { return };
                let result = script.call(&job.tool, &job.args, &job.ctx);
                let failed = result.is_err();
                let _ = job.reply.send(result.map_err(|m| {
                    HandlerError::Failed(format!("lua plugin {} tool {}: {m}", cfg.name, job.tool))
                }));
                if !failed {
                    continue;
                }
                match history.record(Instant::now(), &cfg.policy) {
                    RestartDecision::GiveUp { crashes } => {
                        tracing::error!(plugin = %cfg.name, crashes, "lua plugin stopped: it kept failing");
                        ends.registry.unregister_owner(ends.owner);
                        return;
                    }
                    // A failed call may have left the state half changed: it starts afresh,
                    // as a crashed process does (a state is rebuilt in microseconds, so there
                    // is no wait to keep a crash loop from hammering the machine).
                    RestartDecision::RestartAfter(_) => match cfg.load() {
                        Ok((fresh, _, at)) => (script, mtime) = (fresh, at),
                        Err(e) => tracing::error!("{e}; keeping the previous state"),
                    },
                }
            }
            recv(ends.stopped) -> _ => return,
            default(until_check) => {}
        }
    }
}
