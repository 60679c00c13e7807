//! A running Lua plugin: its script on a thread of its own, its tools, stage handlers and
//! output channels in the kernel's tables, the crash policy over failed calls, and a reload
//! when the file changes.

use crate::LuaPluginError;
use crate::script::{Declarations, Kind, Reverse, Script};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError, bounded};
use hearth_llm::adapter::AdapterLimits;
use hearth_plugin_host::{
    CrashHistory, InProcess, InProcessHost, InProcessPlugin, Manifest, RestartDecision,
    RestartPolicy,
};
use hearth_rpc::{Grants, methods};
use hearth_stages::{
    CallContext, DEFAULT_CAPABILITY, HandlerError, ToolDef, ToolHandler, ToolOwner, ToolSource,
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
    /// What its manifest's `capabilities` grant its `sdk.call`s.
    pub grants: Grants,
}

impl LuaPluginConfig {
    /// The config of a plugin whose manifest's entry is a `.lua` file; `None` for a process.
    pub fn from_manifest(manifest: &Manifest) -> Option<LuaPluginConfig> {
        let lua = manifest.entry.extension().is_some_and(|e| e == "lua");
        lua.then(|| LuaPluginConfig {
            grants: manifest.grants(),
            ..LuaPluginConfig::new(&manifest.name, &manifest.entry)
        })
    }

    /// Defaults for script `entry` of plugin `name`.
    pub fn new(name: &str, entry: &Path) -> LuaPluginConfig {
        LuaPluginConfig {
            name: name.to_owned(),
            entry: entry.to_owned(),
            limits: AdapterLimits::default(),
            policy: RestartPolicy::default(),
            reload_poll: RELOAD_POLL,
            grants: Grants::unrestricted(),
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

    fn load(
        &self,
        reverse: &Reverse,
    ) -> Result<(Script, Declarations, Option<SystemTime>), LuaPluginError> {
        let (source, mtime) = self.read()?;
        let file = self.file_name();
        let reverse = Some(Arc::clone(reverse));
        let (script, decls) = Script::load(&self.name, &file, &source, self.limits, reverse)
            .map_err(|source| LuaPluginError::Load {
                plugin: self.name.clone(),
                file,
                source,
            })?;
        Ok((script, decls, mtime))
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

struct Job {
    kind: Kind,
    name: String,
    args: Value,
    ctx: Value,
    reply: Sender<Result<Value, HandlerError>>,
}

/// The way into the plugin's thread, shared by its tools, stage handlers and output channels.
struct Calls {
    plugin: String,
    jobs: Sender<Job>,
    /// The call's time limit plus the grace for a library call that never reaches the hook.
    wait: Duration,
}

impl Calls {
    fn run(
        &self,
        call: &CallContext,
        kind: Kind,
        name: &str,
        args: Value,
    ) -> Result<Value, HandlerError> {
        let stopped =
            || HandlerError::Unavailable(format!("lua plugin {} is stopped", self.plugin));
        let (reply, answer) = bounded(1);
        let caller = call.caller();
        let ctx = json!({
            "task": call.task_id(),
            "trust": call.trust().as_str(),
            "caller": caller.plugin.as_deref().unwrap_or(&caller.source),
        });
        let job = Job {
            kind,
            name: name.to_owned(),
            args,
            ctx,
            reply,
        };
        self.jobs.try_send(job).map_err(|e| match e {
            TrySendError::Full(_) => HandlerError::Unavailable(format!(
                "lua plugin {} is busy: {QUEUE} calls are waiting for it",
                self.plugin
            )),
            TrySendError::Disconnected(_) => stopped(),
        })?;
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

impl InProcess for Calls {
    fn stage(
        &self,
        call: &CallContext,
        stage: &str,
        context: Value,
    ) -> Result<Value, HandlerError> {
        // A handler that returns nothing leaves the context as it was.
        match self.run(call, Kind::Stage, stage, context.clone())? {
            Value::Null => Ok(context),
            edited => Ok(edited),
        }
    }

    fn output(
        &self,
        call: &CallContext,
        channel: &str,
        message: Value,
    ) -> Result<Value, HandlerError> {
        self.run(call, Kind::Channel, channel, message)
    }
}

/// A tool of a Lua plugin, as the registry calls it: the call goes to the plugin's thread.
struct LuaTool {
    calls: Arc<Calls>,
    tool: String,
}

impl ToolHandler for LuaTool {
    fn call(&self, call: &CallContext, args: &Value) -> Result<Value, HandlerError> {
        self.calls.run(call, Kind::Tool, &self.tool, args.clone())
    }
}

/// A started Lua plugin; dropping it stops the script and removes its tools, stage handlers
/// and output channels.
pub struct LuaPlugin {
    name: String,
    owner: ToolOwner,
    kernel: Arc<InProcessPlugin>,
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

/// Puts what the script declared in the kernel's tables as `owner`'s, replacing what the
/// previous version registered: its tools at once, its stage handlers and output channels
/// through the registrations a process plugin makes.
fn publish(
    kernel: &InProcessPlugin,
    owner: &ToolOwner,
    cfg: &LuaPluginConfig,
    decls: &Declarations,
    calls: &Arc<Calls>,
) {
    let tools = decls
        .tools
        .iter()
        .map(|d| {
            let def = ToolDef {
                name: d.name.clone(),
                plugin: cfg.name.clone(),
                description: d.description.clone(),
                parameters: d.parameters.clone(),
                context_policy: d.context_policy,
                recall_policy: d.recall_policy,
                ..ToolDef::default()
            };
            let handler: Arc<dyn ToolHandler> = Arc::new(LuaTool {
                calls: Arc::clone(calls),
                tool: d.name.clone(),
            });
            (def, DEFAULT_CAPABILITY.to_owned(), handler)
        })
        .collect();
    for refused in kernel.tables().tools.replace_owned(owner, tools) {
        tracing::error!(plugin = %cfg.name, "lua plugin tool refused: {refused}");
    }
    kernel.detach();
    let stages = decls.stages.iter().map(|s| {
        let params = json!({"stage": s.stage, "priority": s.priority, "scope": s.scope});
        (methods::STAGE_REGISTER, params)
    });
    let channels = decls.channels.iter().map(|c| {
        let params = json!({"name": c.name, "desc": c.description, "caps": c.caps});
        (methods::OUTPUT_REGISTER, params)
    });
    for (method, params) in stages.chain(channels) {
        if let Err(e) = kernel.register(method, params) {
            tracing::error!(plugin = %cfg.name, "lua plugin {method} refused: {e}");
        }
    }
}

/// Takes everything the plugin registered out of the kernel's tables.
fn withdraw(kernel: &InProcessPlugin, owner: &ToolOwner) {
    kernel.tables().tools.unregister_owner(owner);
    kernel.detach();
}

impl LuaPlugin {
    /// Loads the script on a new thread and registers what it declares in `host`'s tables.
    /// A script that does not load is an error here and registers nothing.
    pub fn start(cfg: LuaPluginConfig, host: &InProcessHost) -> Result<LuaPlugin, LuaPluginError> {
        let owner = ToolOwner::new(ToolSource::Lua, &cfg.name);
        let (jobs, inbox) = bounded::<Job>(QUEUE);
        let calls = Arc::new(Calls {
            plugin: cfg.name.clone(),
            jobs,
            wait: cfg.limits.wall + cfg.limits.grace,
        });
        let kernel = Arc::new(host.bind(
            &cfg.name,
            cfg.grants.clone(),
            Arc::clone(&calls) as Arc<dyn InProcess>,
            calls.wait,
        ));
        let (started_tx, started) = bounded(1);
        let name = cfg.name.clone();
        let (stop, stopped) = bounded::<()>(0);
        let (thread_kernel, thread_owner) = (Arc::clone(&kernel), owner.clone());
        let thread = std::thread::Builder::new()
            .name(format!("hearth-lua-{name}"))
            .spawn(move || {
                let reverse = reverse_of(&thread_kernel);
                let loaded = cfg.load(&reverse);
                let (script, decls, mtime) = match loaded {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = started_tx.send(Err(e));
                        return;
                    }
                };
                publish(&thread_kernel, &thread_owner, &cfg, &decls, &calls);
                let _ = started_tx.send(Ok(()));
                let ends = Ends {
                    kernel: &thread_kernel,
                    owner: &thread_owner,
                    calls: &calls,
                    reverse: &reverse,
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
            kernel,
            stop: Some(stop),
            thread: Some(thread),
        };
        match started.recv() {
            Ok(Ok(())) => Ok(plugin),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(LuaPluginError::ThreadEnded {
                plugin: plugin.name.clone(),
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
        withdraw(&self.kernel, &self.owner);
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `sdk.call` of the script: the plugin's reverse calls, through its capability gate.
fn reverse_of(kernel: &Arc<InProcessPlugin>) -> Reverse {
    let kernel = Arc::clone(kernel);
    Arc::new(move |method: &str, params: Value| kernel.call(method, params))
}

/// What the plugin's thread works with.
struct Ends<'a> {
    kernel: &'a InProcessPlugin,
    owner: &'a ToolOwner,
    /// For the handlers a reload declares.
    calls: &'a Arc<Calls>,
    reverse: &'a Reverse,
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
                match cfg.load(ends.reverse) {
                    Ok((fresh, decls, at)) => {
                        script = fresh;
                        mtime = at;
                        history.reset();
                        publish(ends.kernel, ends.owner, cfg, &decls, ends.calls);
                        tracing::info!(
                            plugin = %cfg.name,
                            tools = decls.tools.len(),
                            stages = decls.stages.len(),
                            channels = decls.channels.len(),
                            "lua plugin reloaded"
                        );
                    }
                    Err(e) => tracing::error!("{e}; the previous version keeps running"),
                }
            }
        }
        let until_check = next_check.saturating_duration_since(Instant::now());
        crossbeam_channel::select! {
            recv(ends.inbox) -> job => {
                let Ok(job) = job else { return };
                let result = script.call(job.kind, &job.name, &job.args, &job.ctx);
                let failed = result.is_err();
                let _ = job.reply.send(result.map_err(|m| {
                    HandlerError::Failed(format!(
                        "lua plugin {} {} {}: {m}",
                        cfg.name,
                        job.kind.as_str(),
                        job.name
                    ))
                }));
                if !failed {
                    continue;
                }
                match history.record(Instant::now(), &cfg.policy) {
                    RestartDecision::GiveUp { crashes } => {
                        tracing::error!(plugin = %cfg.name, crashes, "lua plugin stopped: it kept failing");
                        withdraw(ends.kernel, ends.owner);
                        return;
                    }
                    // A failed call may have left the state half changed: it starts afresh,
                    // as a crashed process does (a state is rebuilt in microseconds, so there
                    // is no wait to keep a crash loop from hammering the machine).
                    RestartDecision::RestartAfter(_) => match cfg.load(ends.reverse) {
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
