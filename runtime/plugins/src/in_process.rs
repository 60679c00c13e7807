//! Plugins that run inside the daemon's process (Lua scripts) rather than as a child. Their
//! stage handlers and output channels join the kernel's tables through the same registration
//! code and behind the same proxies as a process's, and their reverse calls pass the same
//! capability gate and dispatch: only the last hop differs, a call into the plugin goes to its
//! [`InProcess`] handlers instead of a pipe.

use std::sync::Arc;
use std::time::Duration;

use hearth_rpc::{ErrorKind, Grants, HandlerError as RpcError, methods};
use hearth_settings::Settings;
use serde_json::Value;

use crate::link::Link;
use crate::port::KernelPort;
use crate::service::PluginService;
use crate::tables::Tables;

pub use crate::in_process_handlers::InProcess;

/// Registrations an in-process plugin makes by declaring them, never as a reverse call: each
/// needs the plugin's own handler behind it.
const REGISTRATIONS: [&str; 4] = [
    methods::TOOL_REGISTER,
    methods::STAGE_REGISTER,
    methods::OUTPUT_REGISTER,
    methods::OUTPUT_UNREGISTER,
];

/// What an in-process plugin binds to: the kernel's tables, its port and the settings.
#[derive(Clone)]
pub struct InProcessHost {
    /// The tables its registrations join.
    pub tables: Tables,
    /// The kernel behind its reverse calls.
    pub port: Arc<dyn KernelPort>,
    /// Behind `settings.*`; `None`: those calls answer unavailable.
    pub settings: Option<Arc<Settings>>,
}

impl InProcessHost {
    /// Plugin `name`, allowed what `grants` allows, with its calls served by `handlers`.
    pub fn bind(
        &self,
        name: &str,
        grants: Grants,
        handlers: Arc<dyn InProcess>,
        call_timeout: Duration,
    ) -> InProcessPlugin {
        InProcessPlugin {
            service: PluginService {
                link: Arc::new(Link::new(name, call_timeout, Some(handlers))),
                grants,
                tables: self.tables.clone(),
                port: Arc::clone(&self.port),
                settings: self.settings.clone(),
                home: None,
            },
        }
    }
}

/// One in-process plugin as the kernel sees it.
pub struct InProcessPlugin {
    service: PluginService,
}

impl std::fmt::Debug for InProcessPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessPlugin")
            .field("name", &self.name())
            .finish()
    }
}

impl InProcessPlugin {
    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.service.link.name
    }

    /// The tables it registers into.
    pub fn tables(&self) -> &Tables {
        &self.service.tables
    }

    /// A registration its declarations make: `stage.register` or `output.register` (with the
    /// process protocol's params), through the gate and the code a process's goes through.
    pub fn register(&self, method: &str, params: Value) -> Result<(), RpcError> {
        if !REGISTRATIONS.contains(&method) {
            return Err(RpcError::invalid_arguments(format!(
                "{method} is not a registration"
            )));
        }
        self.service.dispatch(method, params).map(drop)
    }

    /// A reverse call (`memory.search`, `settings.get`, …): the capability gate of its
    /// manifest, then the same dispatch as a process's call.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        if REGISTRATIONS.contains(&method) {
            return Err(RpcError::new(
                ErrorKind::InvalidArguments,
                format!(
                    "{method}: a script plugin declares its tools, stages and channels \
                     (sdk.tool, sdk.stage, sdk.channel) instead"
                ),
            ));
        }
        self.service.dispatch(method, params)
    }

    /// Removes every stage handler and output channel it registered; answers how many of each.
    pub fn detach(&self) -> (usize, usize) {
        let stages = self.service.tables.stages.unregister_plugin(self.name());
        let channels = std::mem::take(&mut *self.service.link.channels.lock());
        for channel in &channels {
            self.service.tables.outputs.unregister(channel);
        }
        (stages, channels.len())
    }
}

impl Drop for InProcessPlugin {
    fn drop(&mut self) {
        self.detach();
    }
}
