//! The installed plugins under `<data_dir>/plugins/<name>/`, their enabled state, their start
//! in dependency order, and the operations behind `hearth plugin …`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::PluginError;
use crate::data_plane::DataPlane;
use crate::in_process::InProcessHost;
use crate::manifest::{MANIFEST_FILE, Manifest};
use crate::order::{Facility, start_order};
use crate::port::KernelPort;
use crate::restart::RestartPolicy;
use crate::session::{PluginSession, Timeouts};
use crate::state::{EnabledState, STATE_FILE};
use crate::status::{PluginState, PluginStatus};
use crate::supervisor::{StopTimeouts, Supervisor};
use crate::tables::Tables;

/// How the host runs its plugins.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// `<data_dir>/plugins`.
    pub plugins_dir: PathBuf,
    /// When crashed plugins restart.
    pub policy: RestartPolicy,
    /// Session time limits.
    pub timeouts: Timeouts,
    /// Stop time limits.
    pub stop: StopTimeouts,
    /// Facilities the daemon has up before any plugin starts.
    pub base: Vec<Facility>,
    /// Each plugin's config section, by name (passed to `plugin.init`).
    pub configs: BTreeMap<String, Value>,
    /// The shared segment offered to every plugin (fd 3, fd 4); `None`: control plane only.
    pub data_plane: Option<Arc<DataPlane>>,
    /// The settings registry behind `settings.*`; `None`: those calls answer unavailable.
    pub settings: Option<Arc<hearth_settings::Settings>>,
}

impl HostConfig {
    /// Defaults for a daemon whose data lives in `data_dir`.
    pub fn new(data_dir: &Path) -> HostConfig {
        HostConfig {
            plugins_dir: data_dir.join("plugins"),
            policy: RestartPolicy::default(),
            timeouts: Timeouts::default(),
            stop: StopTimeouts::default(),
            base: vec![Facility::Memory, Facility::Ring, Facility::Settings],
            configs: BTreeMap::new(),
            data_plane: None,
            settings: None,
        }
    }
}

/// Every installed plugin and the supervisor running them.
pub struct PluginHost {
    cfg: HostConfig,
    tables: Tables,
    port: Arc<dyn KernelPort>,
    supervisor: Arc<Supervisor>,
    installed: Mutex<BTreeMap<String, Manifest>>,
    /// The session of each plugin started so far; a reload starts the same one again, so the
    /// proxies in the kernel's tables keep their link across the swap.
    sessions: Mutex<BTreeMap<String, Arc<PluginSession>>>,
    /// Manifests that failed to load, as messages naming the file and the fix.
    broken: Mutex<Vec<String>>,
    /// Installed plugins whose entry is a Lua script: run in the Lua sandbox, not as processes.
    scripts: Mutex<Vec<Manifest>>,
    state: Mutex<EnabledState>,
}

impl PluginHost {
    /// Opens `cfg.plugins_dir` (creating it) and reads every manifest in it; nothing starts yet.
    pub fn open(
        cfg: HostConfig,
        tables: Tables,
        port: Arc<dyn KernelPort>,
    ) -> Result<Arc<PluginHost>, PluginError> {
        std::fs::create_dir_all(&cfg.plugins_dir).map_err(PluginError::io(&cfg.plugins_dir))?;
        let state = EnabledState::load(&cfg.plugins_dir)?;
        let events = {
            let port = Arc::clone(&port);
            Arc::new(move |kind: &str, payload: &Value| port.publish(kind, payload))
        };
        let supervisor = Arc::new(Supervisor::new(cfg.policy.clone(), events, cfg.stop));
        let host = Arc::new(PluginHost {
            cfg,
            tables,
            port,
            supervisor,
            installed: Mutex::new(BTreeMap::new()),
            sessions: Mutex::new(BTreeMap::new()),
            broken: Mutex::new(Vec::new()),
            scripts: Mutex::new(Vec::new()),
            state: Mutex::new(state),
        });
        host.scan()?;
        Ok(host)
    }

    /// Re-reads every `<plugins_dir>/*/plugin.json`.
    fn scan(&self) -> Result<(), PluginError> {
        let dir = &self.cfg.plugins_dir;
        let mut installed = BTreeMap::new();
        let mut broken = Vec::new();
        let mut scripts = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(PluginError::io(dir))? {
            let path = entry.map_err(PluginError::io(dir))?.path();
            if !path.is_dir() {
                continue;
            }
            match Manifest::load(&path) {
                Ok(m) if path.file_name() != Some(m.name.as_ref()) => broken.push(format!(
                    "{}: name {:?} differs from the directory; fix: rename the directory to {}",
                    path.join(MANIFEST_FILE).display(),
                    m.name,
                    m.name
                )),
                Ok(m) if m.entry.extension().is_some_and(|e| e == "lua") => scripts.push(m),
                Ok(m) => {
                    installed.insert(m.name.clone(), m);
                }
                Err(e) => broken.push(e.to_string()),
            }
        }
        for e in &broken {
            tracing::error!("plugin not loaded: {e}");
        }
        *self.installed.lock() = installed;
        *self.broken.lock() = broken;
        *self.scripts.lock() = scripts;
        Ok(())
    }

    /// The installed plugins whose entry is a `.lua` script, as of the last scan: they run in
    /// the Lua sandbox (`hearth-lua-plugins`), never as processes of the supervisor.
    pub fn scripts(&self) -> Vec<Manifest> {
        self.scripts.lock().clone()
    }

    /// Starts every enabled plugin in dependency order: those needing only kernel facilities at
    /// once, the others as soon as the plugins they need are running. Returns the order; a
    /// cycle or a missing facility is an error and nothing starts.
    pub fn start_all(self: &Arc<Self>) -> Result<Vec<String>, PluginError> {
        let enabled: BTreeMap<String, Vec<Facility>> = {
            let state = self.state.lock();
            self.installed
                .lock()
                .values()
                .filter(|m| state.is_enabled(&m.name))
                .map(|m| (m.name.clone(), m.needs.clone()))
                .collect()
        };
        let order = start_order(&enabled, &self.cfg.base)?;
        let me = Arc::clone(self);
        let plan = order.clone();
        std::thread::Builder::new()
            .name("plugin-start".into())
            .spawn(move || me.start_in_order(&plan, &enabled))
            .map_err(PluginError::io(&self.cfg.plugins_dir))?;
        Ok(order)
    }

    fn start_in_order(&self, order: &[String], needs: &BTreeMap<String, Vec<Facility>>) {
        let limit = self.cfg.timeouts.handshake + self.cfg.timeouts.start;
        'plugins: for name in order {
            for need in &needs[name] {
                let Facility::Plugin(dep) = need else {
                    continue;
                };
                let up = self.supervisor.wait_for(dep, limit, |s| {
                    !matches!(
                        s.state,
                        PluginState::Starting | PluginState::Restarting { .. }
                    )
                });
                if up.as_ref().map(|s| &s.state) != Some(&PluginState::Running) {
                    tracing::error!(
                        plugin = %name,
                        "not started: it needs plugin {dep}, which is not running"
                    );
                    continue 'plugins;
                }
            }
            if let Err(e) = self.start(name) {
                tracing::error!(plugin = %name, "{e}");
            }
        }
    }

    fn start(&self, name: &str) -> Result<(), PluginError> {
        let manifest = self.manifest(name)?;
        let config = self.cfg.configs.get(name).cloned().unwrap_or(Value::Null);
        let mut session = PluginSession::new(
            manifest,
            config,
            self.tables.clone(),
            Arc::clone(&self.port),
            self.cfg.timeouts,
        );
        if let Some(data) = &self.cfg.data_plane {
            session = session.with_data_plane(Arc::clone(data));
        }
        if let Some(settings) = &self.cfg.settings {
            session = session.with_settings(Arc::clone(settings));
        }
        let session = Arc::new(session);
        self.sessions
            .lock()
            .insert(name.to_owned(), Arc::clone(&session));
        self.supervisor.start(session);
        Ok(())
    }

    fn manifest(&self, name: &str) -> Result<Manifest, PluginError> {
        self.installed
            .lock()
            .get(name)
            .cloned()
            .ok_or_else(|| PluginError::NotInstalled { name: name.into() })
    }

    /// What a plugin running in the daemon's process (a Lua script) binds to: the same
    /// tables, kernel port and settings as the processes.
    pub fn in_process_host(&self) -> InProcessHost {
        InProcessHost {
            tables: self.tables.clone(),
            port: Arc::clone(&self.port),
            settings: self.cfg.settings.clone(),
        }
    }

    /// The one supervisor of the daemon's children, for other kinds of child (MCP servers)
    /// to run under the same crash policy.
    pub fn supervisor(&self) -> &Arc<Supervisor> {
        &self.supervisor
    }

    /// The status of one plugin (`Disabled` / `Stopped` when it has not run).
    pub fn status_of(&self, name: &str) -> Option<PluginStatus> {
        if !self.installed.lock().contains_key(name) {
            return None;
        }
        if let Some(s) = self.supervisor.status(name) {
            return Some(s);
        }
        let state = if self.state.lock().is_enabled(name) {
            PluginState::Stopped
        } else {
            PluginState::Disabled
        };
        Some(PluginStatus::new(name, state))
    }

    /// Waits until `name`'s status satisfies `pred`; the status last seen.
    pub fn wait_for(
        &self,
        name: &str,
        timeout: Duration,
        pred: impl Fn(&PluginStatus) -> bool,
    ) -> Option<PluginStatus> {
        // The slot appears when the start thread reaches the plugin.
        let deadline = std::time::Instant::now() + timeout;
        while self.supervisor.status(name).is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        self.supervisor.wait_for(name, left, pred)
    }

    /// `hearth plugin list` and the `plugins` part of `hearth status`.
    pub fn list(&self) -> Value {
        let names: Vec<String> = self.installed.lock().keys().cloned().collect();
        let plugins: Vec<Value> = names
            .iter()
            .filter_map(|n| {
                let m = self.manifest(n).ok()?;
                let mut v = serde_json::to_value(self.status_of(n)?).ok()?;
                v["version"] = json!(m.version);
                v["enabled"] = json!(self.state.lock().is_enabled(n));
                Some(v)
            })
            .collect();
        json!({"plugins": plugins, "not_loaded": *self.broken.lock()})
    }

    /// `hearth plugin info NAME`.
    pub fn info(&self, name: &str) -> Result<Value, PluginError> {
        let m = self.manifest(name)?;
        Ok(json!({
            "name": m.name, "version": m.version, "description": m.description,
            "entry": m.entry, "dir": m.dir, "platforms": m.platforms,
            "capabilities": m.capabilities,
            "needs": m.needs.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "config_schema": m.config_schema,
            "status": self.status_of(name),
            "enabled": self.state.lock().is_enabled(name),
        }))
    }

    /// `hearth plugin install DIR`: validates DIR's manifest, copies DIR to
    /// `<plugins_dir>/<name>/` and starts it. Returns the name.
    pub fn install(&self, src: &Path) -> Result<String, PluginError> {
        let manifest = Manifest::load(src)?;
        let dest = self.cfg.plugins_dir.join(&manifest.name);
        if dest.exists() {
            return Err(PluginError::AlreadyInstalled {
                name: manifest.name,
                dir: dest,
            });
        }
        copy_dir(src, &dest)?;
        self.scan()?;
        self.state.lock().set(&manifest.name, true)?;
        self.start(&manifest.name)?;
        Ok(manifest.name)
    }

    /// `hearth plugin enable NAME`: persists it, starts it, and resets its crash count.
    pub fn enable(&self, name: &str) -> Result<(), PluginError> {
        self.manifest(name)?;
        self.state.lock().set(name, true)?;
        self.supervisor.stop(name);
        self.start(name)
    }

    /// `hearth plugin disable NAME`: persists it and stops it.
    pub fn disable(&self, name: &str) -> Result<(), PluginError> {
        self.manifest(name)?;
        self.state.lock().set(name, false)?;
        self.supervisor.forget(name);
        Ok(())
    }

    /// `hearth plugin reload NAME`: re-reads its manifest and swaps the process (a new binary
    /// is picked up) with a fresh crash count. A running plugin is swapped without losing a
    /// reply: calls in flight finish on the old process, calls arriving meanwhile wait for the
    /// new one, and its tools stay offered throughout.
    pub fn reload(&self, name: &str) -> Result<(), PluginError> {
        self.manifest(name)?;
        let dir = self.cfg.plugins_dir.join(name);
        let manifest = Manifest::load(&dir)?;
        self.installed
            .lock()
            .insert(name.to_owned(), manifest.clone());
        let running = self
            .supervisor
            .status(name)
            .is_some_and(|s| s.state == PluginState::Running);
        let session = self.sessions.lock().get(name).cloned();
        match session {
            Some(session) if running && self.state.lock().is_enabled(name) => {
                session.begin_reload(manifest);
                self.supervisor.stop(name);
                self.supervisor.start(session);
                Ok(())
            }
            _ => {
                self.supervisor.stop(name);
                if self.state.lock().is_enabled(name) {
                    self.start(name)?;
                }
                Ok(())
            }
        }
    }

    /// `hearth plugin remove NAME`: stops it and deletes its directory.
    pub fn remove(&self, name: &str) -> Result<(), PluginError> {
        self.manifest(name)?;
        self.supervisor.forget(name);
        let dir = self.cfg.plugins_dir.join(name);
        std::fs::remove_dir_all(&dir).map_err(PluginError::io(&dir))?;
        self.installed.lock().remove(name);
        self.state.lock().set(name, true)
    }

    /// Stops every plugin (call before the shared segment is unmapped).
    pub fn shutdown(&self) {
        self.supervisor.stop_all();
    }
}

fn copy_dir(src: &Path, dest: &Path) -> Result<(), PluginError> {
    std::fs::create_dir_all(dest).map_err(PluginError::io(dest))?;
    for entry in std::fs::read_dir(src).map_err(PluginError::io(src))? {
        let entry = entry.map_err(PluginError::io(src))?;
        let (from, to) = (entry.path(), dest.join(entry.file_name()));
        if from.file_name().is_some_and(|n| n == STATE_FILE) {
            continue;
        }
        if from.is_dir() {
            copy_dir(&from, &to)?;
        } else {
            // fs::copy keeps the permission bits, so the entry stays executable.
            std::fs::copy(&from, &to).map_err(PluginError::io(&from))?;
        }
    }
    Ok(())
}
