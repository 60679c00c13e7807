//! The adapters between the kernel's handler contracts (`hearth_stages::ToolHandler`,
//! `StageHandler`, `OutputHandler`) and a plugin's `*.invoke` methods, and the mapping of the
//! control plane's typed errors to what those contracts return. Kept in one file so a change of
//! the handler contract touches only this. A plugin that runs in the daemon's process (a Lua
//! script) sits behind the same proxies; only the last hop goes to its [`InProcess`] handlers.

use std::sync::Arc;
use std::time::Duration;

use hearth_rpc::{
    ErrorKind, InvokeResult, OutputInvoke, RpcError, StageInvoke, StageResult, ToolInvoke,
    WireContext, methods,
};
use hearth_stages::{
    CallContext, HandlerError, OutputHandler, StageContext, StageHandler, ToolHandler, Trust,
};
use serde_json::{Value, json};

use crate::data_plane::INLINE_LIMIT;
#[cfg(doc)]
use crate::in_process::InProcess;
use crate::session::Link;
use crate::stage_area;
use crate::tool_blocks::with_blocks;

/// How long a call that saw the pipe close waits to learn how the process ended.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// A plugin's tool in the kernel's `ToolRegistry`.
pub(crate) struct ToolProxy {
    pub(crate) link: Arc<Link>,
    pub(crate) tool: String,
}

impl ToolHandler for ToolProxy {
    fn call(&self, ctx: &CallContext, args: &Value) -> Result<Value, HandlerError> {
        let what = format!("tool {}", self.tool);
        let open = self.link.tool_blocks.open();
        let mut wire = wire_context(ctx, self.link.call_timeout);
        wire.call_id = open.id().to_owned();
        let mut params = ToolInvoke {
            name: self.tool.clone(),
            args: args.clone(),
            ctx: wire,
            args_frame: None,
        };
        let arena = self.link.arena();
        let mut frame = None;
        if let Some((data, owner)) = arena {
            let bytes =
                serde_json::to_vec(args).map_err(|e| HandlerError::Failed(e.to_string()))?;
            if bytes.len() > INLINE_LIMIT {
                let call = data.alloc_call(&bytes, owner).map_err(|e| {
                    HandlerError::Unavailable(format!(
                        "{what} of plugin {}: its {} bytes of arguments do not fit the exchange \
                         arena now: {e}",
                        self.link.name,
                        bytes.len()
                    ))
                })?;
                params.args = Value::Null;
                params.args_frame = Some(call.into());
                frame = Some(call);
            }
        }
        let answer = invoke::<_, InvokeResult>(&self.link, &what, methods::TOOL_INVOKE, &params);
        // The frame is freed whatever the answer; a failed call reports its own error first
        // (the frame of a process that died is reclaimed already and refused here).
        let from_frame = match (frame, arena) {
            (Some(call), Some((data, owner))) => data.finish_call(&call, owner),
            _ => Ok(None),
        };
        let result = answer?;
        let from_frame = from_frame.map_err(|e| refused(&self.link, &what, &e))?;
        let result = self.result(&what, result, from_frame)?;
        Ok(with_blocks(result, open.take()))
    }
}

impl ToolProxy {
    /// The tool's value from its answer: inline, in the call frame, or in a block of its own.
    fn result(
        &self,
        what: &str,
        result: InvokeResult,
        from_frame: Option<Vec<u8>>,
    ) -> Result<Value, HandlerError> {
        let bytes = match (result.result_ref, result.result_in_frame) {
            (None, false) => return Ok(result.result),
            (Some(r), _) => {
                let Some((data, owner)) = self.link.arena() else {
                    return Err(HandlerError::Failed(format!(
                        "{what} of plugin {} answered with an arena reference, but it has no \
                         data plane",
                        self.link.name
                    )));
                };
                data.take_block(&r.into(), owner)
                    .map_err(|e| refused(&self.link, what, &e))?
            }
            (None, true) => from_frame.ok_or_else(|| {
                HandlerError::Failed(format!(
                    "{what} of plugin {} claims its result is in the call frame, but it never \
                     completed one",
                    self.link.name
                ))
            })?,
        };
        serde_json::from_slice(&bytes).map_err(|e| {
            HandlerError::Failed(format!(
                "{what} of plugin {}: the {} bytes of its result in the arena are not JSON: {e}",
                self.link.name,
                bytes.len()
            ))
        })
    }
}

/// A reference the kernel's arena table refuses, as the call's failure.
fn refused(link: &Link, what: &str, e: &hearth_ipc::ArenaError) -> HandlerError {
    HandlerError::Failed(format!(
        "{what} of plugin {}: the kernel refused its arena reference: {e}",
        link.name
    ))
}

/// A plugin's handler on one stage of the kernel's `StagePipeline`.
pub(crate) struct StageProxy {
    pub(crate) link: Arc<Link>,
    pub(crate) stage: String,
}

impl StageHandler for StageProxy {
    fn handle(&self, call: &CallContext, ctx: &mut StageContext) -> Result<(), HandlerError> {
        if self.link.local.is_none()
            && let Some((data, _, pid)) = self.link.stage_area()
            && let Some(edited) =
                stage_area::invoke_over_area(&self.link, data, pid, &self.stage, call, ctx)?
        {
            *ctx = edited;
            return Ok(());
        }
        let context =
            serde_json::to_value(&*ctx).map_err(|e| HandlerError::Failed(e.to_string()))?;
        let what = format!("stage {}", self.stage);
        let edited = match &self.link.local {
            Some(local) => local.stage(call, &self.stage, context)?,
            None => {
                let params = StageInvoke {
                    stage: self.stage.clone(),
                    context,
                    ctx: wire_context(call, self.link.call_timeout),
                    seq: None,
                };
                let result: StageResult =
                    invoke(&self.link, &what, methods::STAGE_INVOKE, &params)?;
                result.context
            }
        };
        *ctx = serde_json::from_value(edited).map_err(|e| {
            HandlerError::Failed(format!(
                "{what} of plugin {}: the returned context does not fit: {e}",
                self.link.name
            ))
        })?;
        Ok(())
    }
}

/// A plugin's output channel in the kernel's `OutputChannels`.
pub(crate) struct OutputProxy {
    pub(crate) link: Arc<Link>,
    pub(crate) channel: String,
}

impl OutputHandler for OutputProxy {
    fn send(
        &self,
        ctx: &CallContext,
        payload: &str,
        kind: &str,
        meta: Option<&Value>,
    ) -> Result<Value, HandlerError> {
        let args = json!({"text": payload, "type": kind, "meta": meta});
        if let Some(local) = &self.link.local {
            return local.output(ctx, &self.channel, args);
        }
        let params = OutputInvoke {
            channel: self.channel.clone(),
            args,
            ctx: wire_context(ctx, self.link.call_timeout),
        };
        let what = format!("output channel {}", self.channel);
        let result: InvokeResult = invoke(&self.link, &what, methods::OUTPUT_INVOKE, &params)?;
        Ok(result.result)
    }
}

/// The call context on the wire: the task, who started it and how far it is trusted, and the
/// time left (the handler's own deadline or the plugin's call timeout, whichever ends first).
pub(crate) fn wire_context(ctx: &CallContext, timeout: Duration) -> WireContext {
    let caller = ctx.caller();
    WireContext {
        task_id: match ctx.task_id() {
            0 => String::new(),
            id => id.to_string(),
        },
        caller: caller
            .plugin
            .clone()
            .unwrap_or_else(|| caller.source.clone()),
        trust: match ctx.trust() {
            Trust::Kernel => hearth_rpc::Trust::Kernel,
            Trust::Local => hearth_rpc::Trust::Builtin,
            _ => hearth_rpc::Trust::External,
        },
        timeout_ms: Some(ctx.remaining().min(timeout).as_millis() as u64),
        cancellable: false,
        call_id: String::new(),
    }
}

pub(crate) fn invoke<P: serde::Serialize, T: serde::de::DeserializeOwned>(
    link: &Link,
    what: &str,
    method: &str,
    params: &P,
) -> Result<T, HandlerError> {
    // Two tries: a call that reached the old process of a reload after it stopped serving is
    // answered "not started" without running, and goes to the new process instead.
    for attempt in 0..2 {
        let Some(peer) = link.peer_wait(link.call_timeout) else {
            return Err(HandlerError::Unavailable(format!(
                "{what}: plugin {} is not running ({})",
                link.name,
                link.last_exit().unwrap_or_else(|| "not started".into())
            )));
        };
        match peer.call_typed(method, params, link.call_timeout) {
            Err(RpcError::Remote { error, .. })
                if attempt == 0
                    && error.kind == ErrorKind::Unavailable
                    && (link.is_reloading() || link.peer().is_none_or(|p| !p.same(&peer))) => {}
            other => return other.map_err(|e| describe(link, what, e)),
        }
    }
    Err(HandlerError::Unavailable(format!(
        "{what}: plugin {} was being reloaded and did not take the call",
        link.name
    )))
}

/// The typed control-plane error as the handler contract's kind, with the sentence the model and
/// the user read.
fn describe(link: &Link, what: &str, e: RpcError) -> HandlerError {
    let plugin = &link.name;
    match e {
        RpcError::Remote { error, .. } => {
            let message = format!(
                "{what} of plugin {plugin} failed ({}): {}",
                error.kind.name(),
                error.message
            );
            match error.kind {
                ErrorKind::InvalidArguments => HandlerError::InvalidArguments(message),
                ErrorKind::Denied => HandlerError::Denied(message),
                ErrorKind::TimedOut => HandlerError::TimedOut,
                ErrorKind::Cancelled => HandlerError::Cancelled,
                ErrorKind::Unavailable | ErrorKind::Busy => HandlerError::Unavailable(message),
                _ => HandlerError::Failed(message),
            }
        }
        RpcError::Closed { .. } => HandlerError::Failed(format!(
            "plugin {plugin} exited during the call to {what} ({}); the call did not complete",
            link.wait_exit(EXIT_GRACE)
                .unwrap_or_else(|| "it closed its pipe".into())
        )),
        RpcError::TimedOut { after, .. } => HandlerError::Failed(format!(
            "{what} of plugin {plugin} did not answer within {after:?}; the call was cancelled"
        )),
        other => HandlerError::Failed(format!("{what} of plugin {plugin}: {other}")),
    }
}
