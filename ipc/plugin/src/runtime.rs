//! Serving the kernel: the handshake, the lifecycle and the `*.invoke` dispatch.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use hearth_rpc::{
    ConnectionConfig, DEFAULT_MAX_FRAME, ErrorKind, HandshakeParams, Incoming, InitParams,
    InvokeResult, OutputInvoke, Service, StageInvoke, ToolInvoke, connect, methods,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use hearth_ipc::CallFrame;

use crate::context::CallContext;
use crate::data_plane::DataPlane;
use crate::error::{PluginError, ToolError};
use crate::exchange;
use crate::host::Host;
use crate::plugin::Plugin;
use crate::registrar::{Handlers, Registrar};
use crate::stage;

/// The SDK's version, sent in the handshake.
pub const SDK_VERSION: &str = concat!("hearth-plugin ", env!("CARGO_PKG_VERSION"));

/// How long the process lingers after its last answer is due, so the answer is written before
/// it exits.
const DRAIN_LIMIT: Duration = Duration::from_secs(1);
/// How long a stopped plugin goes on reading, once nothing is in flight, before it exits.
const DRAIN_QUIET: Duration = Duration::from_millis(30);

/// How [`serve`] runs the control plane.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Longest frame read or written.
    pub max_frame: usize,
    /// Kernel requests served at once; more are answered busy.
    pub max_in_flight: usize,
    /// How long a read keeps looking before it sleeps ([`ConnectionConfig::read_spin`]).
    pub read_spin: Duration,
}

impl Default for ServeConfig {
    fn default() -> ServeConfig {
        ServeConfig {
            max_frame: DEFAULT_MAX_FRAME,
            max_in_flight: 32,
            read_spin: hearth_rpc::default_read_spin(),
        }
    }
}

/// Runs `plugin` over stdin/stdout until the kernel stops it or closes the pipe. Errors are
/// written to stderr (which the kernel logs); the exit code says whether it ended cleanly.
///
/// Stdout belongs to the protocol: a plugin writes its own output to stderr or
/// [`Host::log`]. A stray line on stdout is rejected by the kernel as a bad frame and costs
/// nothing else.
pub fn run<P: Plugin>(plugin: P) -> ExitCode {
    // The connection polls what it reads, so it reads the descriptor itself: std's stdin
    // buffers in user space, where a poll cannot see bytes.
    let stdin = match std::io::stdin().as_fd().try_clone_to_owned() {
        Ok(fd) => std::fs::File::from(fd),
        Err(e) => {
            eprintln!("{}: cannot read stdin: {e}", plugin.name());
            return ExitCode::FAILURE;
        }
    };
    match serve(plugin, stdin, std::io::stdout(), ServeConfig::default()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `plugin` over any pair of streams (the kernel's end of a pipe, a socket, a test's).
/// The reader must not buffer in user space (see [`hearth_rpc::connect`]).
pub fn serve<P: Plugin>(
    plugin: P,
    reader: impl Read + AsFd + Send + 'static,
    writer: impl Write + Send + 'static,
    config: ServeConfig,
) -> Result<(), PluginError> {
    let name = plugin.name().to_owned();
    let runtime = Arc::new(Runtime {
        name: name.clone(),
        plugin: Mutex::new(plugin),
        handlers: Handlers::default(),
        host: OnceLock::new(),
        phase: Mutex::new(Phase::New),
        end: (Mutex::new(None), Condvar::new()),
    });
    let peer = connect(
        reader,
        writer,
        Arc::clone(&runtime),
        ConnectionConfig {
            max_frame: config.max_frame,
            max_in_flight: config.max_in_flight,
            name: name.clone(),
            read_spin: config.read_spin,
        },
    );
    let end = runtime.wait_end();
    let drained_by = Instant::now() + DRAIN_LIMIT;
    // Drained means nothing in flight and nothing read for a quiet spell: during a reload a
    // kernel caller that took this connection just before the stop may still write a call,
    // which must be read and answered "not started" (so it goes to the new process) rather than
    // lost with this process.
    let mut quiet_since = Instant::now();
    let mut frames = peer.stats().frames_in;
    while !peer.is_closed() && Instant::now() < drained_by {
        let now_frames = peer.stats().frames_in;
        if peer.in_flight() > 0 || now_frames != frames {
            frames = now_frames;
            quiet_since = Instant::now();
        } else if quiet_since.elapsed() >= DRAIN_QUIET {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    match end {
        End::Stopped | End::Closed => Ok(()),
        End::VersionMismatch(message) => Err(PluginError::VersionMismatch {
            plugin: name,
            message,
        }),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    New,
    Handshaken,
    Initialized,
    Started,
    Stopped,
}

enum End {
    Stopped,
    Closed,
    VersionMismatch(String),
}

struct Runtime<P> {
    name: String,
    plugin: Mutex<P>,
    handlers: Handlers,
    host: OnceLock<Host>,
    phase: Mutex<Phase>,
    end: (Mutex<Option<End>>, Condvar),
}

impl<P: Plugin> Service for Runtime<P> {
    fn call(&self, request: Incoming) -> Result<Value, ToolError> {
        let rt = self;
        match request.method.as_str() {
            methods::TOOL_INVOKE => rt.invoke_tool(request),
            methods::STAGE_INVOKE => rt.invoke_stage(request),
            methods::OUTPUT_INVOKE => rt.invoke_output(request),
            methods::HANDSHAKE => rt.handshake(request),
            methods::PLUGIN_INIT => rt.init(request),
            methods::PLUGIN_START => rt.start(),
            methods::PLUGIN_STOP => rt.stop(),
            other => Err(ToolError::method_not_found(other)),
        }
    }

    fn closed(&self) {
        let rt = self;
        let was = std::mem::replace(&mut *lock(&rt.phase), Phase::Stopped);
        if matches!(was, Phase::Initialized | Phase::Started) {
            rt.handlers.run_stop_handlers();
            lock(&rt.plugin).stop();
        }
        rt.finish(End::Closed);
    }
}

impl<P: Plugin> Runtime<P> {
    fn handshake(&self, request: Incoming) -> Result<Value, ToolError> {
        let params: HandshakeParams = decode(&request.method, request.params)?;
        self.advance(Phase::New, Phase::Handshaken, methods::HANDSHAKE)?;
        match hearth_rpc::accept(&params, &self.name, SDK_VERSION) {
            Ok(mut result) => {
                let data_plane = params.data_plane.as_ref().and_then(|offer| {
                    DataPlane::attach(offer)
                        .inspect_err(|e| {
                            eprintln!("{}: data plane not used: {e}", self.name);
                        })
                        .ok()
                        .map(Arc::new)
                });
                result.data_plane = data_plane.is_some();
                // Set once: `advance` lets only the first handshake through.
                let _ = self.host.set(Host::new(request.peer, data_plane));
                encode(&result)
            }
            Err(error) => {
                self.finish(End::VersionMismatch(error.message.clone()));
                Err(error)
            }
        }
    }

    fn init(&self, request: Incoming) -> Result<Value, ToolError> {
        let params: InitParams = decode(&request.method, request.params)?;
        if !params.name.is_empty() && params.name != self.name {
            return Err(ToolError::invalid_arguments(format!(
                "plugin.init names {:?}, this plugin is {:?}",
                params.name, self.name
            )));
        }
        self.advance(Phase::Handshaken, Phase::Initialized, methods::PLUGIN_INIT)?;
        lock(&self.plugin).init(&params.config)?;
        Ok(Value::Object(Default::default()))
    }

    fn start(&self) -> Result<Value, ToolError> {
        self.advance(Phase::Initialized, Phase::Started, methods::PLUGIN_START)?;
        let host = self.host()?;
        let mut reg = Registrar::new(host, &self.handlers);
        if let Err(e) = lock(&self.plugin).start(&mut reg) {
            // Left initialised: the kernel may stop it, or try `plugin.start` again.
            *lock(&self.phase) = Phase::Initialized;
            return Err(e);
        }
        Ok(Value::Object(Default::default()))
    }

    fn stop(&self) -> Result<Value, ToolError> {
        let was = std::mem::replace(&mut *lock(&self.phase), Phase::Stopped);
        if matches!(was, Phase::Initialized | Phase::Started) {
            self.handlers.run_stop_handlers();
            lock(&self.plugin).stop();
        }
        self.finish(End::Stopped);
        Ok(Value::Object(Default::default()))
    }

    fn invoke_tool(&self, request: Incoming) -> Result<Value, ToolError> {
        self.started()?;
        let params: ToolInvoke = decode(&request.method, request.params)?;
        let handler = lookup(&self.handlers.tools, &params.name, "tool", &self.name)?;
        let ctx = self.context(params.ctx, request.cancel)?;
        let frame = params.args_frame.map(CallFrame::from);
        let args = match frame {
            Some(call) => exchange::read_args(self.host()?, &call)?,
            None => params.args,
        };
        let result = handler(&ctx, args)?;
        encode(&exchange::answer(self.host()?, result, frame.as_ref())?)
    }

    fn invoke_stage(&self, request: Incoming) -> Result<Value, ToolError> {
        self.started()?;
        let params: StageInvoke = decode(&request.method, request.params)?;
        let handler = lookup(
            &self.handlers.stages,
            &params.stage,
            "stage handler",
            &self.name,
        )?;
        let ctx = self.context(params.ctx.clone(), request.cancel)?;
        encode(&stage::invoke(&*handler, &ctx, params)?)
    }

    fn invoke_output(&self, request: Incoming) -> Result<Value, ToolError> {
        self.started()?;
        let params: OutputInvoke = decode(&request.method, request.params)?;
        let handler = lookup(
            &self.handlers.outputs,
            &params.channel,
            "output channel",
            &self.name,
        )?;
        let ctx = self.context(params.ctx, request.cancel)?;
        let result = handler(&ctx, params.args)?;
        encode(&InvokeResult {
            result,
            ..InvokeResult::default()
        })
    }

    fn context(
        &self,
        wire: hearth_rpc::WireContext,
        cancel: hearth_rpc::CancelToken,
    ) -> Result<CallContext, ToolError> {
        let ctx = CallContext::new(wire, cancel, self.host()?);
        if ctx.remaining().is_some_and(|left| left.is_zero()) {
            return Err(ToolError::timed_out(
                "the call's deadline passed before it started",
            ));
        }
        Ok(ctx)
    }

    fn started(&self) -> Result<(), ToolError> {
        if *lock(&self.phase) != Phase::Started {
            return Err(ToolError::unavailable(format!(
                "plugin {} is not started",
                self.name
            )));
        }
        Ok(())
    }

    fn host(&self) -> Result<&Host, ToolError> {
        self.host
            .get()
            .ok_or_else(|| ToolError::new(ErrorKind::InvalidRequest, "handshake first"))
    }

    fn advance(&self, from: Phase, to: Phase, method: &str) -> Result<(), ToolError> {
        let mut phase = lock(&self.phase);
        if *phase != from {
            return Err(ToolError::new(
                ErrorKind::InvalidRequest,
                format!(
                    "{method} is not allowed now: plugin {} is {:?}, expected {from:?}",
                    self.name, *phase
                ),
            ));
        }
        *phase = to;
        Ok(())
    }

    fn finish(&self, end: End) {
        let (lock_, cvar) = &self.end;
        let mut slot = lock(lock_);
        if slot.is_none() {
            *slot = Some(end);
        }
        cvar.notify_all();
    }

    fn wait_end(&self) -> End {
        let (lock_, cvar) = &self.end;
        let mut slot = lock(lock_);
        loop {
            if let Some(end) = slot.take() {
                return end;
            }
            slot = cvar.wait(slot).unwrap_or_else(|p| p.into_inner());
        }
    }
}

fn lookup<H: ?Sized>(
    table: &std::sync::RwLock<std::collections::HashMap<String, Arc<H>>>,
    name: &str,
    what: &str,
    plugin: &str,
) -> Result<Arc<H>, ToolError> {
    let table = table.read().unwrap_or_else(|p| p.into_inner());
    table.get(name).cloned().ok_or_else(|| {
        ToolError::invalid_arguments(format!("plugin {plugin} has no {what} named {name:?}"))
    })
}

fn decode<T: DeserializeOwned>(method: &str, params: Value) -> Result<T, ToolError> {
    serde_json::from_value(params)
        .map_err(|e| ToolError::invalid_arguments(format!("{method}: invalid params: {e}")))
}

fn encode<T: Serialize>(value: &T) -> Result<Value, ToolError> {
    serde_json::to_value(value).map_err(|e| {
        ToolError::new(
            ErrorKind::Internal,
            format!("result does not serialise: {e}"),
        )
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
