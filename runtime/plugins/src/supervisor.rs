//! One supervisor for every child the daemon starts (plugins, and any other program run under
//! the same rules): one thread per child spawns it, waits for it with `waitid` (not for end of
//! file on its stdout, which a grandchild may hold open), detaches it on exit and restarts it
//! by the [`RestartPolicy`].
//!
//! The child is spawned on that same long-lived thread with the parent-death signal set
//! ([`hearth_ipc::kill_with_parent`]), so it dies with the daemon, even a SIGKILLed one.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{Id, WaitPidFlag, waitid};
use nix::unistd::Pid;
use parking_lot::{Condvar, Mutex};
use serde_json::{Value, json};

use crate::restart::{CrashHistory, RestartDecision, RestartPolicy};
use crate::status::{PluginState, PluginStatus};

/// Why a supervised child could not be started or brought up. Its text is what the status
/// (`last_error`), the log and the `plugin_failed` event show.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The program does not exist.
    #[error("could not start {path:?}: {source}")]
    Missing {
        /// The program.
        path: PathBuf,
        /// The OS error (not found).
        #[source]
        source: std::io::Error,
    },
    /// The program exists but may not be executed.
    #[error("could not start {path:?}: {source}")]
    NotExecutable {
        /// The program.
        path: PathBuf,
        /// The OS error (permission denied).
        #[source]
        source: std::io::Error,
    },
    /// The program is not an executable of this platform (another architecture, no `#!`).
    #[error("could not start {path:?}: {source}")]
    WrongPlatform {
        /// The program.
        path: PathBuf,
        /// The OS error (exec format error).
        #[source]
        source: std::io::Error,
    },
    /// Spawning failed for another reason.
    #[error("could not start {path:?}: {source}")]
    Spawn {
        /// The program.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Nothing to run is configured.
    #[error("{what} has no command")]
    NoCommand {
        /// What has none (`mcp server fs`).
        what: String,
    },
    /// The child's share of the data plane (its doorbell) could not be set up.
    #[error("no doorbell for the child: {source}")]
    Doorbell {
        /// The IPC error.
        #[source]
        source: hearth_ipc::IpcError,
    },
    /// The spawned child lacks a pipe the attach needs.
    #[error("the process has no {streams} pipes")]
    NotPiped {
        /// The missing streams (`stdin/stdout`).
        streams: &'static str,
    },
    /// The handshake with the child failed.
    #[error("{source}")]
    Handshake {
        /// The RPC error, naming the plugin and the reason.
        #[source]
        source: hearth_rpc::RpcError,
    },
    /// A start-up request (`plugin.init`, `plugin.start`) failed.
    #[error("{method} failed: {source}")]
    Request {
        /// The method.
        method: &'static str,
        /// The RPC error.
        #[source]
        source: hearth_rpc::RpcError,
    },
    /// The parameters of a start-up request could not be encoded.
    #[error("{method}: {source}")]
    Encode {
        /// The method.
        method: &'static str,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },
    /// Bringing the child up failed in its own protocol's terms (an MCP handshake, a model
    /// server that never became healthy).
    #[error("{source}")]
    Attach {
        /// The implementor's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl SpawnError {
    /// The spawn of `path` failed with `source`, classified by its OS error.
    pub fn spawn(path: impl Into<PathBuf>, source: std::io::Error) -> SpawnError {
        let path = path.into();
        match source.kind() {
            std::io::ErrorKind::NotFound => SpawnError::Missing { path, source },
            std::io::ErrorKind::PermissionDenied => SpawnError::NotExecutable { path, source },
            _ if source.raw_os_error() == Some(nix::errno::Errno::ENOEXEC as i32) => {
                SpawnError::WrongPlatform { path, source }
            }
            _ => SpawnError::Spawn { path, source },
        }
    }

    /// An attach failure carrying the implementor's own error.
    pub fn attach(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> SpawnError {
        SpawnError::Attach {
            source: source.into(),
        }
    }
}

/// What the supervisor runs. Called on the child's supervisor thread.
pub trait Supervised: Send + Sync + 'static {
    /// The name in status, logs and events.
    fn name(&self) -> &str;
    /// A fresh command for each start (program, arguments, pipes, working directory).
    fn command(&self) -> Result<Command, SpawnError>;
    /// Takes over the spawned child (its pipes) and brings it up; `Err` stops the process and
    /// marks it failed without a restart (a start that fails once fails again).
    fn attach(&self, child: &mut Child) -> Result<(), SpawnError>;
    /// The child is gone (`why` says how): detach everything it offered, fail its pending calls.
    fn detach(&self, why: &str);
    /// Asks a running child to stop by itself (for a plugin: `plugin.stop`), waiting at most
    /// `timeout`. The supervisor signals it afterwards if it is still there.
    fn request_stop(&self, timeout: Duration) {
        let _ = timeout;
    }
    /// Whether a crash is followed by a restart (a plugin may opt out).
    fn auto_restart(&self) -> bool {
        true
    }
}

/// Where lifecycle events go (`plugin_crashed`, `plugin_gave_up`, …).
pub type EventSink = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// How long a stop waits between asking, SIGTERM and SIGKILL.
#[derive(Debug, Clone, Copy)]
pub struct StopTimeouts {
    /// For the child's own clean exit after the stop request.
    pub graceful: Duration,
    /// After SIGTERM, before SIGKILL.
    pub term: Duration,
}

impl Default for StopTimeouts {
    fn default() -> StopTimeouts {
        StopTimeouts {
            graceful: hearth_rpc::STOP_TIMEOUT,
            term: Duration::from_secs(2),
        }
    }
}

struct Slot {
    target: Arc<dyn Supervised>,
    state: Mutex<SlotState>,
    changed: Condvar,
}

struct SlotState {
    status: PluginStatus,
    /// The live, not yet reaped child. Cleared under this lock right before reaping, so a
    /// signal sent under the lock never reaches a recycled pid.
    pid: Option<Pid>,
    want_running: bool,
    history: CrashHistory,
    thread: Option<JoinHandle<()>>,
}

/// Every supervised child, by name.
pub struct Supervisor {
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    policy: RestartPolicy,
    events: EventSink,
    stop: StopTimeouts,
}

impl Supervisor {
    /// A supervisor restarting by `policy`, publishing to `events`.
    pub fn new(policy: RestartPolicy, events: EventSink, stop: StopTimeouts) -> Supervisor {
        Supervisor {
            slots: Mutex::new(HashMap::new()),
            policy,
            events,
            stop,
        }
    }

    /// Starts `target` (replacing a stopped child of the same name); a manual start resets its
    /// crash count. A child already running is left alone.
    pub fn start(self: &Arc<Self>, target: Arc<dyn Supervised>) {
        let name = target.name().to_owned();
        let slot = Arc::new(Slot {
            target,
            state: Mutex::new(SlotState {
                status: PluginStatus::new(&name, PluginState::Starting),
                pid: None,
                want_running: true,
                history: CrashHistory::default(),
                thread: None,
            }),
            changed: Condvar::new(),
        });
        {
            let mut slots = self.slots.lock();
            if let Some(old) = slots.get(&name) {
                let st = old.state.lock();
                if st.thread.as_ref().is_some_and(|t| !t.is_finished()) {
                    return;
                }
            }
            slots.insert(name.clone(), Arc::clone(&slot));
        }
        let me = Arc::clone(self);
        let for_thread = Arc::clone(&slot);
        let thread = std::thread::Builder::new()
            .name(format!("sup-{name}"))
            .spawn(move || me.run(&for_thread));
        let mut st = slot.state.lock();
        match thread {
            Ok(handle) => st.thread = Some(handle),
            Err(e) => {
                st.want_running = false;
                st.status.state = PluginState::Failed;
                st.status.last_error = Some(format!("no supervisor thread: {e}"));
            }
        }
    }

    /// Stops the child: asks it, then SIGTERM, then SIGKILL, and waits for its thread. Returns
    /// whether there was one.
    pub fn stop(&self, name: &str) -> bool {
        let Some(slot) = self.slots.lock().get(name).cloned() else {
            return false;
        };
        let running = {
            let mut st = slot.state.lock();
            st.want_running = false;
            slot.changed.notify_all();
            st.pid.is_some() && st.status.state == PluginState::Running
        };
        // Only a started child can be asked; one still starting is signalled at once.
        let graceful = if running {
            slot.target.request_stop(self.stop.graceful);
            self.stop.graceful
        } else {
            Duration::ZERO
        };
        let deadline = Instant::now() + graceful;
        let mut st = slot.state.lock();
        for (signal, wait_until) in [
            (None, deadline),
            (Some(Signal::SIGTERM), deadline + self.stop.term),
            (
                Some(Signal::SIGKILL),
                Instant::now() + Duration::from_secs(3600),
            ),
        ] {
            if let (Some(sig), Some(pid)) = (signal, st.pid) {
                // With no graceful stop (a server asked by SIGTERM alone), SIGTERM is the ask.
                if sig == Signal::SIGKILL || !graceful.is_zero() {
                    tracing::warn!(plugin = name, ?sig, "the child did not stop by itself");
                }
                let _ = kill(pid, sig);
            }
            while st.pid.is_some() && Instant::now() < wait_until {
                slot.changed.wait_until(&mut st, wait_until);
            }
            if st.pid.is_none() {
                break;
            }
        }
        let thread = st.thread.take();
        drop(st);
        if let Some(t) = thread {
            let _ = t.join();
        }
        true
    }

    /// Stops every child (before the shared segment is unmapped).
    pub fn stop_all(&self) {
        let names: Vec<String> = self.slots.lock().keys().cloned().collect();
        for name in names {
            self.stop(&name);
        }
    }

    /// Forgets a stopped child.
    pub fn forget(&self, name: &str) {
        self.stop(name);
        self.slots.lock().remove(name);
    }

    /// The status of `name`.
    pub fn status(&self, name: &str) -> Option<PluginStatus> {
        let slot = self.slots.lock().get(name).cloned()?;
        let st = slot.state.lock();
        Some(st.status.clone())
    }

    /// Waits until `name`'s status satisfies `pred`, at most `timeout`; the last status seen.
    pub fn wait_for(
        &self,
        name: &str,
        timeout: Duration,
        pred: impl Fn(&PluginStatus) -> bool,
    ) -> Option<PluginStatus> {
        let slot = self.slots.lock().get(name).cloned()?;
        let deadline = Instant::now() + timeout;
        let mut st = slot.state.lock();
        while !pred(&st.status) && Instant::now() < deadline {
            slot.changed.wait_until(&mut st, deadline);
        }
        Some(st.status.clone())
    }

    fn set(&self, slot: &Slot, f: impl FnOnce(&mut SlotState)) {
        let mut st = slot.state.lock();
        f(&mut st);
        slot.changed.notify_all();
    }

    fn publish(&self, kind: &str, payload: Value) {
        (self.events)(kind, &payload);
    }

    /// The child's thread: start, wait, decide, again.
    fn run(&self, slot: &Slot) {
        let target = &slot.target;
        let name = target.name().to_owned();
        loop {
            self.set(slot, |st| {
                st.status.state = PluginState::Starting;
                st.status.pid = None;
            });
            let mut child = match target.command().and_then(|mut cmd| {
                hearth_ipc::kill_with_parent(&mut cmd);
                cmd.spawn()
                    .map_err(|e| SpawnError::spawn(cmd.get_program(), e))
            }) {
                Ok(child) => child,
                Err(e) => return self.failed(slot, &e),
            };
            let pid = Pid::from_raw(child.id() as i32);
            self.set(slot, |st| {
                st.pid = Some(pid);
                st.status.pid = Some(child.id());
                // A stop that came before the pid was visible could not signal it: do it here
                // (under the lock `stop` reads the pid under, so one of the two always does).
                if !st.want_running {
                    let _ = kill(pid, Signal::SIGKILL);
                }
            });
            if let Err(e) = target.attach(&mut child) {
                let reason = e.to_string();
                self.set(slot, |st| {
                    if let Some(pid) = st.pid {
                        let _ = kill(pid, Signal::SIGKILL);
                    }
                });
                self.reap(slot, &mut child, pid);
                target.detach(&reason);
                if !slot.state.lock().want_running {
                    return self.set(slot, |st| {
                        st.status.state = PluginState::Stopped;
                        st.status.pid = None;
                    });
                }
                return self.failed(slot, &e);
            }
            let stopping = {
                let mut st = slot.state.lock();
                if st.want_running {
                    st.status.state = PluginState::Running;
                    slot.changed.notify_all();
                    false
                } else {
                    true
                }
            };
            if stopping {
                // A stop arrived while it was starting; it has been asked (or is being) to go.
                let _ = kill(pid, Signal::SIGTERM);
            }
            tracing::info!(plugin = %name, pid = pid.as_raw(), "plugin started");
            let exit = self.reap(slot, &mut child, pid);
            target.detach(&exit);
            let mut st = slot.state.lock();
            if !st.want_running {
                st.status.state = PluginState::Stopped;
                st.status.pid = None;
                slot.changed.notify_all();
                tracing::info!(plugin = %name, "plugin stopped ({exit})");
                return;
            }
            st.status.pid = None;
            st.status.last_error = Some(exit.clone());
            let decision = st.history.record(Instant::now(), &self.policy);
            st.status.crashes = st.history.count();
            tracing::error!(plugin = %name, crashes = st.status.crashes, "plugin crashed: {exit}");
            self.publish(
                "plugin_crashed",
                json!({"plugin": name, "reason": exit, "crashes": st.status.crashes}),
            );
            let delay = match decision {
                _ if !target.auto_restart() => {
                    st.status.state = PluginState::Stopped;
                    slot.changed.notify_all();
                    tracing::warn!(plugin = %name, "auto-restart is off for this plugin");
                    return;
                }
                RestartDecision::GiveUp { crashes } => {
                    st.status.state = PluginState::GaveUp { crashes };
                    st.want_running = false;
                    slot.changed.notify_all();
                    let window = self.policy.window;
                    tracing::error!(
                        plugin = %name,
                        "plugin crashed {crashes} times within {window:?}; not restarting it \
                         until `hearth plugin reload {name}` or `hearth plugin enable {name}`"
                    );
                    self.publish(
                        "plugin_gave_up",
                        json!({"plugin": name, "crashes": crashes, "window_ms": window.as_millis() as u64}),
                    );
                    return;
                }
                RestartDecision::RestartAfter(delay) => delay,
            };
            st.status.state = PluginState::Restarting {
                in_ms: delay.as_millis() as u64,
            };
            slot.changed.notify_all();
            let until = Instant::now() + delay;
            while st.want_running && Instant::now() < until {
                slot.changed.wait_until(&mut st, until);
            }
            if !st.want_running {
                st.status.state = PluginState::Stopped;
                slot.changed.notify_all();
                return;
            }
            st.status.restarts += 1;
        }
    }

    /// Waits for the child to exit, then reaps it with its pid cleared under the state lock.
    fn reap(&self, slot: &Slot, child: &mut Child, pid: Pid) -> String {
        // WNOWAIT leaves the child a zombie, so its pid cannot be reused before we clear it.
        let waited = loop {
            match waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
                Err(nix::errno::Errno::EINTR) => continue,
                other => break other,
            }
        };
        let mut st = slot.state.lock();
        st.pid = None;
        let status = child.wait();
        slot.changed.notify_all();
        drop(st);
        match (status, waited) {
            (Ok(status), _) => describe_exit(status),
            (Err(e), Err(w)) => format!("could not wait for the process: {e} (waitid: {w})"),
            (Err(e), Ok(_)) => format!("could not wait for the process: {e}"),
        }
    }

    fn failed(&self, slot: &Slot, e: &SpawnError) {
        let reason = e.to_string();
        let name = slot.target.name().to_owned();
        tracing::error!(plugin = %name, "plugin could not be started: {reason}");
        // Published before the state shows it: whoever sees `Failed` finds the event out.
        self.publish("plugin_failed", json!({"plugin": name, "reason": reason}));
        self.set(slot, |st| {
            st.want_running = false;
            st.status.state = PluginState::Failed;
            st.status.pid = None;
            st.status.last_error = Some(reason);
        });
    }
}

/// An exit status in words: `exited with status 3`, `killed by SIGKILL`.
pub fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("the process exited with status {code}"),
        (None, Some(sig)) => match Signal::try_from(sig) {
            Ok(s) => format!("the process was killed by {}", s.as_str()),
            Err(_) => format!("the process was killed by signal {sig}"),
        },
        _ => "the process ended".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn spawn_of(path: &std::path::Path) -> SpawnError {
        let e = Command::new(path).spawn().expect_err("cannot be spawned");
        SpawnError::spawn(path, e)
    }

    #[test]
    fn a_spawn_failure_says_whether_the_entry_is_missing_not_executable_or_foreign() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("no-such-entry");
        let e = spawn_of(&missing);
        assert!(matches!(e, SpawnError::Missing { .. }), "{e:?}");
        assert!(e.to_string().starts_with("could not start "), "{e}");
        assert!(e.to_string().contains("no-such-entry"), "{e}");

        let plain = dir.path().join("plain");
        std::fs::write(&plain, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let e = spawn_of(&plain);
        assert!(matches!(e, SpawnError::NotExecutable { .. }), "{e:?}");

        let foreign = dir.path().join("foreign");
        std::fs::write(&foreign, [0x7f, b'E', b'L', b'F', 0, 0, 0, 0]).expect("write");
        std::fs::set_permissions(&foreign, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let e = spawn_of(&foreign);
        assert!(matches!(e, SpawnError::WrongPlatform { .. }), "{e:?}");
    }
}
