//! What the proxies in the kernel's tables hold of a plugin: its connection (none while it is
//! down), a reload's swap, its share of the data plane, and how its last process ended. The
//! session changes it only through its methods.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use hearth_rpc::Peer;
use parking_lot::{Condvar, Mutex};

use crate::data_plane::{ChildPlane, DataPlane};
use crate::in_process_handlers::InProcess;
use crate::supervisor::SpawnError;

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

    /// A reload starts: new calls wait for the next process, and the current connection is
    /// kept for the calls in flight and for `plugin.stop`.
    pub(crate) fn begin_reload(&self) {
        *self.reloading.lock() = true;
        if let Some(peer) = self.peer.lock().take() {
            *self.draining.lock() = Some(peer);
        }
    }

    /// A reload ends (the new process is up, or never came up): waiting calls go on.
    pub(crate) fn end_reload(&self) {
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
    pub(crate) fn release_child(&self) {
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

    /// A process is about to be spawned by `cmd`: it inherits a fresh share of the data plane
    /// (any share a failed spawn left behind is given back first).
    pub(crate) fn new_child(&self, cmd: &mut Command) -> Result<(), SpawnError> {
        if let Some(data) = &self.data {
            self.release_child();
            let child = data.child()?;
            data.inherit(cmd, &child);
            *self.child.lock() = Some(child);
        }
        Ok(())
    }

    /// The data plane to offer the new process in its handshake, when it has a share.
    pub(crate) fn data_plane_offer(&self) -> Option<serde_json::Value> {
        match (&self.data, &*self.child.lock()) {
            (Some(data), Some(child)) => Some(data.offer(child)),
            _ => None,
        }
    }

    /// What the new process's handshake said: its pid, and whether it attached the data
    /// plane (its stage calls then go through the stage-context area).
    pub(crate) fn handshaken(&self, pid: u32, area: bool) {
        self.pid.store(pid, Ordering::Relaxed);
        self.area.store(area, Ordering::Relaxed);
    }

    /// Calls go to `peer` from now on.
    pub(crate) fn connect(&self, peer: &Peer) {
        *self.peer.lock() = Some(peer.clone());
    }

    /// The process finished `plugin.start`; a reload that was waiting for it ends.
    pub(crate) fn came_up(&self) {
        self.up.store(true, Ordering::Relaxed);
        self.end_reload();
    }

    /// A process was spawned and is being attached: no exit yet, restarted if it dies.
    pub(crate) fn attached(&self) {
        *self.exit.lock() = None;
        self.auto_restart.store(true, Ordering::Relaxed);
    }

    /// The process ended (`why`): its connections are closed, which fails every pending call
    /// at once. Answers whether it had come up.
    pub(crate) fn detached(&self, why: &str) -> bool {
        *self.exit.lock() = Some(why.to_owned());
        self.exited.notify_all();
        // Closing fails every pending call at once: the process is gone even when a grandchild
        // keeps its stdout open, so end of file may never come.
        for slot in [&self.peer, &self.draining] {
            if let Some(peer) = slot.lock().take() {
                peer.close();
            }
        }
        self.up.swap(false, Ordering::Relaxed)
    }

    /// Where `plugin.stop` goes: the connection a reload is draining, else the current one.
    pub(crate) fn stop_target(&self) -> Option<Peer> {
        let draining = self.draining.lock().clone();
        draining.or_else(|| self.peer())
    }
}
