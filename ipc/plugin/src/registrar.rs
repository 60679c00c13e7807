//! What a plugin registers while it starts, and the handler table the SDK serves from.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use hearth_rpc::{InputRegister, OutputRegister, StageRegister, ToolRegister, methods};
use serde_json::{Value, json};

use crate::context::CallContext;
use crate::defs::{OutputChannel, StageSpec, ToolDef};
use crate::error::ToolError;
use crate::host::Host;

/// A tool's code: the model's arguments in, the raw result out.
pub type ToolHandler = dyn Fn(&CallContext, Value) -> Result<Value, ToolError> + Send + Sync;
/// A stage handler's code: edits the stage context (a JSON object) in place. The same object
/// whether the context came inline or from the shared stage-context area (see the crate docs).
pub type StageHandler = dyn Fn(&CallContext, &mut Value) -> Result<(), ToolError> + Send + Sync;
/// An output channel's code: sends `{text, …}` out, answers with the delivery result.
pub type OutputHandler = dyn Fn(&CallContext, Value) -> Result<Value, ToolError> + Send + Sync;

type StopHandler = Box<dyn FnOnce() + Send>;

/// The handlers the SDK dispatches `*.invoke` calls to.
#[derive(Default)]
pub(crate) struct Handlers {
    pub tools: RwLock<HashMap<String, Arc<ToolHandler>>>,
    pub stages: RwLock<HashMap<String, Arc<StageHandler>>>,
    pub outputs: RwLock<HashMap<String, Arc<OutputHandler>>>,
    pub stop: Mutex<Vec<StopHandler>>,
}

impl Handlers {
    /// Runs the stop handlers newest first, once: they are taken out of the table, so a second
    /// stop (the pipe closing after `plugin.stop`) finds none.
    pub fn run_stop_handlers(&self) {
        let handlers = std::mem::take(&mut *lock(&self.stop));
        for handler in handlers.into_iter().rev() {
            if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(handler)) {
                eprintln!(
                    "a stop handler panicked: {}",
                    hearth_rpc::panic_message(&*panic)
                );
            }
        }
    }
}

/// Registers a plugin's tools, stage handlers and channels with the kernel (`plugin.start`).
///
/// Each registration is a reverse call the kernel answers before the next; an `Err` means the
/// kernel refused it (a duplicate or invalid name) and nothing was registered.
pub struct Registrar<'a> {
    host: &'a Host,
    handlers: &'a Handlers,
}

impl<'a> Registrar<'a> {
    pub(crate) fn new(host: &'a Host, handlers: &'a Handlers) -> Registrar<'a> {
        Registrar { host, handlers }
    }

    /// The kernel, for calls outside any task (settings, subscriptions).
    pub fn host(&self) -> &Host {
        self.host
    }

    /// Registers a tool.
    pub fn tool(
        &mut self,
        def: ToolDef,
        handler: impl Fn(&CallContext, Value) -> Result<Value, ToolError> + Send + Sync + 'static,
    ) -> Result<(), ToolError> {
        let params = ToolRegister {
            name: def.name.clone(),
            def: serde_json::to_value(&def).expect("a tool definition serialises"),
        };
        register(
            self.host,
            &self.handlers.tools,
            &def.name,
            Arc::new(handler),
            methods::TOOL_REGISTER,
            &params,
        )
    }

    /// Registers a stage handler (one per stage per plugin).
    pub fn stage(
        &mut self,
        spec: StageSpec,
        handler: impl Fn(&CallContext, &mut Value) -> Result<(), ToolError> + Send + Sync + 'static,
    ) -> Result<(), ToolError> {
        let params = StageRegister {
            stage: spec.stage.clone(),
            scope: spec.scope,
            priority: spec.priority,
        };
        register(
            self.host,
            &self.handlers.stages,
            &spec.stage,
            Arc::new(handler),
            methods::STAGE_REGISTER,
            &params,
        )
    }

    /// Registers an output channel.
    pub fn output_channel(
        &mut self,
        channel: OutputChannel,
        handler: impl Fn(&CallContext, Value) -> Result<Value, ToolError> + Send + Sync + 'static,
    ) -> Result<(), ToolError> {
        let params = OutputRegister {
            name: channel.name.clone(),
            caps: channel.caps,
            desc: channel.description,
            def: json!({"no_memory": channel.no_memory}),
        };
        register(
            self.host,
            &self.handlers.outputs,
            &channel.name,
            Arc::new(handler),
            methods::OUTPUT_REGISTER,
            &params,
        )
    }

    /// Registers an input channel: a name this plugin injects inputs under.
    pub fn input_channel(&mut self, name: &str, no_memory: bool) -> Result<(), ToolError> {
        let params = InputRegister {
            name: name.to_owned(),
            def: json!({"no_memory": no_memory}),
        };
        let params = serde_json::to_value(params).expect("params serialise");
        self.host.call(methods::INPUT_REGISTER, params).map(drop)
    }

    /// Whether the supervisor restarts the plugin after a crash (the default is yes).
    pub fn auto_restart(&mut self, enabled: bool) -> Result<(), ToolError> {
        self.host
            .call(methods::LIFECYCLE_AUTO_RESTART, json!({"enabled": enabled}))
            .map(drop)
    }

    /// Runs `f` when the plugin stops, before [`Plugin::stop`](crate::Plugin::stop); stop
    /// handlers run newest first, once.
    pub fn on_stop(&mut self, f: impl FnOnce() + Send + 'static) {
        lock(&self.handlers.stop).push(Box::new(f));
    }
}

/// Installs the handler first (the kernel may invoke it as soon as it has answered), then tells
/// the kernel; a refusal takes the handler out again.
fn register<H: ?Sized, P: serde::Serialize>(
    host: &Host,
    table: &RwLock<HashMap<String, Arc<H>>>,
    name: &str,
    handler: Arc<H>,
    method: &str,
    params: &P,
) -> Result<(), ToolError> {
    {
        let mut table = table.write().unwrap_or_else(|p| p.into_inner());
        if table.contains_key(name) {
            return Err(ToolError::invalid_arguments(format!(
                "{method}: {name} is already registered by this plugin"
            )));
        }
        table.insert(name.to_owned(), handler);
    }
    let params = serde_json::to_value(params).expect("registration params serialise");
    match host.call(method, params) {
        Ok(_) => Ok(()),
        Err(e) => {
            table
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .remove(name);
            Err(e)
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
