//! One plugin's process seen from the kernel: spawned with its pipes, handshaken, initialised
//! and started, served while it runs, and detached from every kernel table when it exits.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use hearth_rpc::{
    ConnectionConfig, HandshakeParams, InitParams, Peer, SUPPORTED_VERSIONS, connect, handshake,
    methods,
};
use hearth_settings::Settings;
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::data_plane::DataPlane;
use crate::link::Link;
use crate::manifest::Manifest;
use crate::port::KernelPort;
use crate::service::PluginService;
use crate::supervisor::{SpawnError, Supervised};

pub use crate::tables::Tables;

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
        self.link.begin_reload();
        *self.manifest.lock() = manifest;
    }

    fn bring_up(&self, peer: &Peer) -> Result<(), SpawnError> {
        let name = &self.name;
        let data_plane = self.link.data_plane_offer();
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
        self.link
            .handshaken(answer.pid, answer.data_plane && data_plane_offered);
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
            self.link.connect(peer);
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
            self.link.connect(peer);
        }
        self.link.came_up();
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
        self.link.new_child(&mut cmd)?;
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
        self.link.attached();
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
        let was_up = self.link.detached(why);
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
        if let Some(peer) = self.link.stop_target()
            && let Err(e) = peer.call(methods::PLUGIN_STOP, json!({}), timeout)
        {
            tracing::warn!(plugin = %self.name, "plugin.stop: {e}");
        }
    }

    fn auto_restart(&self) -> bool {
        self.link.auto_restart.load(Ordering::Relaxed)
    }
}
