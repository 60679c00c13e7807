//! One plugin's process seen from the kernel: spawned with its pipes, handshaken, initialised
//! and started, served while it runs, and detached from every kernel table when it exits.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use hearth_rpc::{
    ConnectionConfig, HandshakeParams, InitParams, Peer, SUPPORTED_VERSIONS, connect, handshake,
    methods,
};
use hearth_settings::Settings;
use hearth_stages::{OutputChannels, StagePipeline, ToolRegistry};
use parking_lot::{Condvar, Mutex};
use serde_json::{Value, json};

use crate::data_plane::{ChildPlane, DataPlane};
use crate::in_process::InProcess;
use crate::manifest::Manifest;
use crate::port::KernelPort;
use crate::service::PluginService;
use crate::supervisor::{SpawnError, Supervised};

/// The kernel tables a plugin registers into.
#[derive(Clone, Default)]
pub struct Tables {
    /// Tools the model may call.
    pub tools: Arc<ToolRegistry>,
    /// Stage handlers.
    pub stages: Arc<StagePipeline>,
    /// Output channels.
    pub outputs: Arc<OutputChannels>,
}

/// Time limits of one plugin's session.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// For the handshake answer (PROTOCOL §6: 10 s).
    pub handshake: Duration,
    /// For `plugin.init` and for `plugin.start` (which makes the registrations).
    pub start: Duration,
    /// For each tool, stage or output call into the plugin.
    pub call: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            handshake: hearth_rpc::HANDSHAKE_TIMEOUT,
            start: Duration::from_secs(30),
            call: Duration::from_secs(120),
        }
    }
}

/// What the proxies in the kernel's tables hold of a plugin: its current connection (none
/// while it is down) and how its last process ended.
pub(crate) struct Link {
    pub(crate) name: String,
    pub(crate) call_timeout: Duration,
    peer: Mutex<Option<Peer>>,
    /// The old process's connection while a reload stops it: its in-flight calls finish on
    /// it, and it is what `plugin.stop` goes to.
    draining: Mutex<Option<Peer>>,
    /// A reload is swapping the process: calls wait for the new connection instead of
    /// failing, and the registrations stay in the kernel's tables until the new process
    /// replaces them.
    reloading: Mutex<bool>,
    /// Signalled when a connection comes up or a reload ends.
    peer_changed: Condvar,
    /// The current process finished `plugin.start`.
    up: AtomicBool,
    /// Tools the current process registered (a reload prunes the old ones it did not).
    pub(crate) tools: Mutex<std::collections::BTreeSet<String>>,
    exit: Mutex<Option<String>>,
    exited: Condvar,
    /// Output channels it registered, to remove on exit (the table has no per-plugin index).
    pub(crate) channels: Mutex<Vec<String>>,
    pub(crate) auto_restart: AtomicBool,
    /// The shared segment, when the daemon offers one.
    pub(crate) data: Option<Arc<DataPlane>>,
    /// The current process's share of it (arena owner id, doorbell), from spawn to exit.
    child: Mutex<Option<ChildPlane>>,
    /// The current process attached the data plane (its handshake said so): its stage calls
    /// go through the stage-context area.
    area: AtomicBool,
    /// The current process's pid, from its handshake: the writer its area fields must name.
    pid: AtomicU32,
    /// The handlers of a plugin that runs in the daemon's process: the proxies call these
    /// instead of a peer.
    pub(crate) local: Option<Arc<dyn InProcess>>,
    /// Its running tool calls and the media each was given (`io.setToolBlocks`).
    pub(crate) tool_blocks: crate::tool_blocks::ToolBlocks,
}

impl Link {
    /// The link of plugin `name`, down until a process comes up; `local` serves its calls in
    /// the daemon's own process instead (a script plugin, which never has a peer).
    pub(crate) fn new(
        name: &str,
        call_timeout: Duration,
        local: Option<Arc<dyn InProcess>>,
    ) -> Link {
        Link {
            name: name.to_owned(),
            call_timeout,
            peer: Mutex::new(None),
            draining: Mutex::new(None),
            reloading: Mutex::new(false),
            peer_changed: Condvar::new(),
            up: AtomicBool::new(false),
            tools: Mutex::new(Default::default()),
            exit: Mutex::new(None),
            exited: Condvar::new(),
            channels: Mutex::new(Vec::new()),
            auto_restart: AtomicBool::new(true),
            data: None,
            child: Mutex::new(None),
            area: AtomicBool::new(false),
            pid: AtomicU32::new(0),
            local,
            tool_blocks: Default::default(),
        }
    }

    pub(crate) fn peer(&self) -> Option<Peer> {
        self.peer.lock().clone()
    }

    /// The connection to call on; while a reload swaps the process, waits (at most `timeout`)
    /// for the new one.
    pub(crate) fn peer_wait(&self, timeout: Duration) -> Option<Peer> {
        let deadline = std::time::Instant::now() + timeout;
        let mut reloading = self.reloading.lock();
        loop {
            if let Some(peer) = self.peer() {
                return Some(peer);
            }
            if !*reloading {
                return None;
            }
            if self
                .peer_changed
                .wait_until(&mut reloading, deadline)
                .timed_out()
            {
                return self.peer();
            }
        }
    }

    /// Whether a reload is under way.
    pub(crate) fn is_reloading(&self) -> bool {
        *self.reloading.lock()
    }

    fn end_reload(&self) {
        *self.reloading.lock() = false;
        self.peer_changed.notify_all();
    }

    /// The data plane and the current process's arena owner id, while it runs with one.
    pub(crate) fn arena(&self) -> Option<(&DataPlane, u32)> {
        let owner = self.child.lock().as_ref()?.owner;
        Some((self.data.as_deref()?, owner))
    }

    /// The data plane, the process's arena owner id and its pid, when its stage calls go
    /// through the stage-context area. A process that gave no pid in its handshake gets the
    /// inline form: the area names each field's writer by pid, and 0 would match no check.
    pub(crate) fn stage_area(&self) -> Option<(&DataPlane, u32, u32)> {
        let pid = self.pid.load(Ordering::Relaxed);
        if !self.area.load(Ordering::Relaxed) || pid == 0 {
            return None;
        }
        let (data, owner) = self.arena()?;
        Some((data, owner, pid))
    }

    /// Gives the previous process's share of the data plane back (its doorbell, its blocks).
    fn release_child(&self) {
        if let (Some(data), Some(child)) = (&self.data, self.child.lock().take()) {
            let freed = data.release(child);
            if freed > 0 {
                tracing::debug!(plugin = %self.name, freed, "arena blocks reclaimed");
            }
        }
    }

    pub(crate) fn last_exit(&self) -> Option<String> {
        self.exit.lock().clone()
    }

    /// How the process ended, waiting up to `timeout` for the supervisor to reap it: a closed
    /// pipe is usually seen a moment before the exit.
    pub(crate) fn wait_exit(&self, timeout: Duration) -> Option<String> {
        let mut exit = self.exit.lock();
        if exit.is_none() {
            self.exited
                .wait_while_for(&mut exit, |e| e.is_none(), timeout);
        }
        exit.clone()
    }
}

/// A plugin as the supervisor runs it.
pub struct PluginSession {
    name: String,
    /// Re-read by a reload; each start uses the current one.
    manifest: Mutex<Manifest>,
    config: Value,
    tables: Tables,
    port: Arc<dyn KernelPort>,
    timeouts: Timeouts,
    link: Arc<Link>,
    settings: Option<Arc<Settings>>,
}

impl PluginSession {
    /// A session for `manifest`, passing `config` to `plugin.init`.
    pub fn new(
        manifest: Manifest,
        config: Value,
        tables: Tables,
        port: Arc<dyn KernelPort>,
        timeouts: Timeouts,
    ) -> PluginSession {
        let link = Arc::new(Link::new(&manifest.name, timeouts.call, None));
        PluginSession {
            name: manifest.name.clone(),
            manifest: Mutex::new(manifest),
            config,
            tables,
            port,
            timeouts,
            link,
            settings: None,
        }
    }

    /// Serves the plugin's `settings.*` calls from `settings`.
    pub fn with_settings(mut self, settings: Arc<Settings>) -> PluginSession {
        self.settings = Some(settings);
        self
    }

    /// Offers `data` to every process of this session: the segment as fd 3, a doorbell of
    /// its own as fd 4, announced in the handshake.
    pub fn with_data_plane(mut self, data: Arc<DataPlane>) -> PluginSession {
        Arc::get_mut(&mut self.link)
            .expect("the link is not shared before the session runs")
            .data = Some(data);
        self
    }

    /// Starts a reload: new calls wait for the next process instead of failing, the old
    /// process's in-flight calls finish on its connection, and its registrations stay until
    /// the next process replaces them. The supervisor then stops the old process and starts
    /// this session again with `manifest`.
    pub fn begin_reload(&self, manifest: Manifest) {
        *self.link.reloading.lock() = true;
        if let Some(peer) = self.link.peer.lock().take() {
            *self.link.draining.lock() = Some(peer);
        }
        *self.manifest.lock() = manifest;
    }

    fn bring_up(&self, peer: &Peer) -> Result<(), SpawnError> {
        let name = &self.name;
        let data_plane = match (&self.link.data, &*self.link.child.lock()) {
            (Some(data), Some(child)) => Some(data.offer(child)),
            _ => None,
        };
        let data_plane_offered = data_plane.is_some();
        let offer = HandshakeParams {
            protocol_versions: SUPPORTED_VERSIONS.to_vec(),
            kernel_version: env!("CARGO_PKG_VERSION").to_owned(),
            plugin_name: name.clone(),
            data_plane,
        };
        let answer = handshake(peer, &offer, self.timeouts.handshake)
            .map_err(|source| SpawnError::Handshake { source })?;
        tracing::debug!(plugin = %name, sdk = %answer.sdk_version, "handshake done");
        self.link.pid.store(answer.pid, Ordering::Relaxed);
        self.link
            .area
            .store(answer.data_plane && data_plane_offered, Ordering::Relaxed);
        let init = InitParams {
            name: name.clone(),
            config: self.config.clone(),
        };
        let init = serde_json::to_value(init).map_err(|source| SpawnError::Encode {
            method: methods::PLUGIN_INIT,
            source,
        })?;
        peer.call(methods::PLUGIN_INIT, init, self.timeouts.start)
            .map_err(|source| SpawnError::Request {
                method: methods::PLUGIN_INIT,
                source,
            })?;
        self.link.tools.lock().clear();
        let reloading = self.link.is_reloading();
        if !reloading {
            // Tools are invocable as soon as their registration is answered, during
            // plugin.start.
            *self.link.peer.lock() = Some(peer.clone());
        }
        peer.call(methods::PLUGIN_START, json!({}), self.timeouts.start)
            .map_err(|source| SpawnError::Request {
                method: methods::PLUGIN_START,
                source,
            })?;
        if reloading {
            // The old process's tools it did not register again go; the rest were replaced.
            let kept = self.link.tools.lock().clone();
            for def in self.tables.tools.defs() {
                if def.plugin == *name && !kept.contains(&def.name) {
                    self.tables.tools.unregister(&def.name);
                }
            }
            *self.link.peer.lock() = Some(peer.clone());
        }
        self.link.up.store(true, Ordering::Relaxed);
        self.link.end_reload();
        Ok(())
    }
}

impl Supervised for PluginSession {
    fn name(&self) -> &str {
        &self.name
    }

    fn command(&self) -> Result<Command, SpawnError> {
        let manifest = self.manifest.lock();
        let mut cmd = Command::new(&manifest.entry);
        cmd.current_dir(&manifest.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(data) = &self.link.data {
            // A spawn that failed after the last command left its share behind.
            self.link.release_child();
            let child = data.child()?;
            data.inherit(&mut cmd, &child);
            *self.link.child.lock() = Some(child);
        }
        Ok(cmd)
    }

    fn attach(&self, child: &mut Child) -> Result<(), SpawnError> {
        let name = self.name.clone();
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(SpawnError::NotPiped {
                streams: "stdin/stdout",
            });
        };
        if let Some(stderr) = child.stderr.take() {
            let plugin = name.clone();
            let _ = std::thread::Builder::new()
                .name(format!("log-{name}"))
                .spawn(move || {
                    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                        tracing::info!(plugin = %plugin, "{line}");
                    }
                });
        }
        *self.link.exit.lock() = None;
        self.link.auto_restart.store(true, Ordering::Relaxed);
        // One guard for both: a struct literal keeps its temporaries to the end.
        let (grants, home) = {
            let manifest = self.manifest.lock();
            (manifest.grants(), manifest.dir.clone())
        };
        let service = PluginService {
            link: Arc::clone(&self.link),
            grants,
            tables: self.tables.clone(),
            port: Arc::clone(&self.port),
            settings: self.settings.clone(),
            home: Some(home),
        };
        let config = ConnectionConfig {
            name: name.clone(),
            ..ConnectionConfig::default()
        };
        let peer = connect(stdout, stdin, service, config);
        self.bring_up(&peer).inspect_err(|_| peer.close())
    }

    fn detach(&self, why: &str) {
        let name = &self.name;
        *self.link.exit.lock() = Some(why.to_owned());
        self.link.exited.notify_all();
        // Closing fails every pending call at once: the process is gone even when a grandchild
        // keeps its stdout open, so end of file may never come.
        for slot in [&self.link.peer, &self.link.draining] {
            if let Some(peer) = slot.lock().take() {
                peer.close();
            }
        }
        let was_up = self.link.up.swap(false, Ordering::Relaxed);
        if was_up && self.link.is_reloading() {
            // The old process of a reload: its tools stay for the next one to replace, so
            // calls arriving meanwhile wait instead of finding no tool.
            let stages = self.tables.stages.unregister_plugin(name);
            let channels: Vec<String> = std::mem::take(&mut *self.link.channels.lock());
            for channel in &channels {
                self.tables.outputs.unregister(channel);
            }
            self.link.release_child();
            tracing::info!(plugin = %name, stages, "plugin swapped out for a reload: {why}");
            return;
        }
        // A reload whose new process never came up ends here: waiting calls fail now.
        self.link.end_reload();
        let tools = self.tables.tools.unregister_plugin(name);
        let stages = self.tables.stages.unregister_plugin(name);
        let channels: Vec<String> = std::mem::take(&mut *self.link.channels.lock());
        for channel in &channels {
            self.tables.outputs.unregister(channel);
        }
        // After the peer closed: no call of this process can still be reading a block.
        self.link.release_child();
        tracing::info!(
            plugin = %name,
            tools, stages, channels = channels.len(),
            "plugin detached: {why}"
        );
    }

    fn request_stop(&self, timeout: Duration) {
        let draining = self.link.draining.lock().clone();
        if let Some(peer) = draining.or_else(|| self.link.peer())
            && let Err(e) = peer.call(methods::PLUGIN_STOP, json!({}), timeout)
        {
            tracing::warn!(plugin = %self.name, "plugin.stop: {e}");
        }
    }

    fn auto_restart(&self) -> bool {
        self.link.auto_restart.load(Ordering::Relaxed)
    }
}
