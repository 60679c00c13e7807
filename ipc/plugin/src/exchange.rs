//! Tool arguments and results through the exchange arena: what the SDK does, unseen by the
//! handler, when a payload is too large for the pipe (`ipc/PROTOCOL.md` §9.3).

use hearth_ipc::{ArenaRef, CallFrame};
use hearth_rpc::{ErrorKind, InvokeResult};
use serde_json::Value;

use crate::error::ToolError;
use crate::host::Host;

fn no_plane() -> ToolError {
    ToolError::new(
        ErrorKind::Failed,
        "the kernel sent the arguments in the exchange arena, but this process has no data plane",
    )
}

fn arena_error(what: &str, e: hearth_ipc::ArenaError) -> ToolError {
    ToolError::new(ErrorKind::Failed, format!("{what}: {e}"))
}

/// The arguments the kernel left at the start of `call`, parsed.
pub(crate) fn read_args(host: &Host, call: &CallFrame) -> Result<Value, ToolError> {
    let plane = host.data_plane().ok_or_else(no_plane)?;
    let mut bytes = Vec::new();
    plane
        .arena()
        .read_args(call, &mut bytes)
        .map_err(|e| arena_error("reading the arguments from the arena", e))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        ToolError::invalid_arguments(format!(
            "the {} bytes of arguments in the arena are not JSON: {e}",
            bytes.len()
        ))
    })
}

/// The answer to a tool call: inline while the result is small (or there is no data plane),
/// else written into the call's frame when it fits there, else into a block of its own from
/// `arena.alloc`. Never truncated: a result the arena cannot take is an error naming its size.
pub(crate) fn answer(
    host: &Host,
    result: Value,
    frame: Option<&CallFrame>,
) -> Result<InvokeResult, ToolError> {
    let inline = InvokeResult {
        result,
        ..InvokeResult::default()
    };
    let Some(plane) = host.data_plane() else {
        return Ok(inline);
    };
    let bytes = serde_json::to_vec(&inline.result).map_err(|e| {
        ToolError::new(
            ErrorKind::Internal,
            format!("result does not serialise: {e}"),
        )
    })?;
    if bytes.len() <= plane.inline_limit() {
        return Ok(inline);
    }
    let too_large = || {
        ToolError::new(
            ErrorKind::Failed,
            format!(
                "the result has {} bytes, more than an arena block can hold",
                bytes.len()
            ),
        )
    };
    let len = u32::try_from(bytes.len()).map_err(|_| too_large())?;
    if let Some(call) = frame
        && len <= call.result_room()
    {
        plane
            .arena()
            .answer(call, &bytes)
            .map_err(|e| arena_error("writing the result into the call frame", e))?;
        return Ok(InvokeResult {
            result_in_frame: true,
            ..InvokeResult::default()
        });
    }
    let block = host.arena_alloc(len)?;
    if let Err(e) = plane.arena().write(&block, 0, &bytes) {
        // Give the block back; the write's failure is the answer.
        let _ = host.call(
            hearth_rpc::methods::ARENA_FREE,
            serde_json::json!({"ref": hearth_rpc::SharedRef::from(block)}),
        );
        return Err(arena_error("writing the result into its block", e));
    }
    Ok(InvokeResult {
        result_ref: Some(block.with_flags(ArenaRef::JSON | ArenaRef::EXPAND).into()),
        ..InvokeResult::default()
    })
}
