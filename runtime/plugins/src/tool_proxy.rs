//! The adapters between the kernel's handler contracts (`hearth_stages::ToolHandler`,
//! `StageHandler`, `OutputHandler`) and a plugin's `*.invoke` methods; the call itself and the
//! mapping of the control plane's typed errors to what those contracts return are `invoke.rs`.
//! A change of the handler contract touches only these two. A plugin that runs in the daemon's
//! process (a Lua script) sits behind the same proxies; only the last hop goes to its
//! [`InProcess`] handlers.

use std::sync::Arc;

use hearth_rpc::{InvokeResult, OutputInvoke, StageInvoke, StageResult, ToolInvoke, methods};
use hearth_stages::{
    CallContext, HandlerError, OutputHandler, StageContext, StageHandler, ToolHandler,
};
use serde_json::{Value, json};

use crate::data_plane::INLINE_LIMIT;
#[cfg(doc)]
use crate::in_process_handlers::InProcess;
use crate::invoke::{invoke, wire_context};
use crate::link::Link;
use crate::stage_area;
use crate::tool_blocks::with_blocks;

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
