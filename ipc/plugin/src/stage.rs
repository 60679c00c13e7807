//! Serving `stage.invoke`: the handler always edits one JSON object; the SDK fills it from the
//! call (inline form) or from the shared stage-context area (area form, PROTOCOL §9.4), and in
//! the area form writes back only the fields the handler changed and names them.

use hearth_rpc::{ErrorKind, StageInvoke, StageResult};

use crate::context::CallContext;
use crate::error::ToolError;
use crate::registrar::StageHandler;

/// Runs `handler` on the context `params` carries or names.
pub(crate) fn invoke(
    handler: &StageHandler,
    ctx: &CallContext,
    params: StageInvoke,
) -> Result<StageResult, ToolError> {
    let Some(seq) = params.seq else {
        let mut context = params.context;
        handler(ctx, &mut context)?;
        return Ok(StageResult {
            context,
            ..StageResult::default()
        });
    };
    let area = ctx
        .host()
        .data_plane()
        .ok_or_else(|| {
            ToolError::new(
                ErrorKind::InvalidRequest,
                format!(
                    "stage.invoke {} names stage {seq} of the shared area, but this process has \
                     no data plane (send the context inline)",
                    params.stage
                ),
            )
        })?
        .stage_context();
    let stale = |now: u64| {
        ToolError::new(
            ErrorKind::InvalidRequest,
            format!(
                "stage.invoke {} names stage {seq}, the stage-context area holds stage {now}",
                params.stage
            ),
        )
    };
    if area.stage_seq() != seq {
        return Err(stale(area.stage_seq()));
    }
    let before = area.load_object().map_err(area_error)?;
    let mut context = before.clone();
    handler(ctx, &mut context)?;
    // A handler that ran past a newer stage must not write into it.
    if area.stage_seq() != seq {
        return Err(stale(area.stage_seq()));
    }
    let written = area.write_changes(&before, &context).map_err(area_error)?;
    Ok(StageResult {
        dirty_fields: Some(written.into_iter().map(str::to_owned).collect()),
        seq: Some(seq),
        ..StageResult::default()
    })
}

fn area_error(e: hearth_ipc::IpcError) -> ToolError {
    let kind = match e {
        hearth_ipc::IpcError::Field(hearth_ipc::FieldError::Busy { .. }) => ErrorKind::Busy,
        _ => ErrorKind::Failed,
    };
    ToolError::new(kind, format!("stage context area: {e}"))
}
