//! A plugin's stage call over the shared stage-context area (PROTOCOL §9.4): the kernel loads
//! the context's fields into the area, sends `stage.invoke {stage, seq, ctx}`, and applies only
//! the fields the plugin names in `{dirty_fields}`, after checking each against the area's dirty
//! set and its writer. Any doubt fails the call with the reason and applies nothing.

use std::time::Duration;

use hearth_ipc::{NO_MEMORY, StageField};
use hearth_rpc::{StageInvoke, StageResult, methods};
use hearth_stages::{CallContext, HandlerError, StageContext};
use serde_json::Value;

use crate::data_plane::DataPlane;
use crate::invoke::{invoke, wire_context};
use crate::link::Link;

/// How long a stage call waits for the area while another stage call uses it.
const AREA_WAIT: Duration = Duration::from_secs(1);

/// Runs `stage` of the plugin behind `link` on `ctx` over the area of `data`. `Ok(None)`: the
/// context does not fit the area (a field over its capacity, or of a form the area cannot
/// hold) or the area stayed busy for [`AREA_WAIT`], so the caller sends it inline instead.
pub(crate) fn invoke_over_area(
    link: &Link,
    data: &DataPlane,
    pid: u32,
    stage: &str,
    call: &CallContext,
    ctx: &StageContext,
) -> Result<Option<StageContext>, HandlerError> {
    let what = format!("stage {stage}");
    let object = serde_json::to_value(ctx).map_err(|e| HandlerError::Failed(e.to_string()))?;
    // Never held up for long by another turn's stage call (a handler waiting on a turn it
    // started itself would wait for ever): the context then goes inline.
    let Some(_area) = data.stage_area(AREA_WAIT) else {
        tracing::debug!(plugin = %link.name, stage, "stage-context area busy, context sent inline");
        return Ok(None);
    };
    let loaded = data.with_context(|area| {
        let seq = area.begin_stage();
        let stored = area.store_object(&object);
        // What the kernel itself just wrote is not the plugin's doing.
        area.take_dirty();
        stored.map(|()| seq)
    });
    let seq = match loaded {
        Ok(seq) => seq,
        Err(e) => {
            tracing::debug!(plugin = %link.name, stage, "context sent inline: {e}");
            return Ok(None);
        }
    };
    let params = StageInvoke {
        stage: stage.to_owned(),
        seq: Some(seq),
        ctx: wire_context(call, link.call_timeout),
        ..StageInvoke::default()
    };
    let result: StageResult = invoke(link, &what, methods::STAGE_INVOKE, &params)?;
    let fail = |reason: String| {
        HandlerError::Failed(format!(
            "{what} of plugin {}: {reason}; none of its fields were applied",
            link.name
        ))
    };
    apply(data, pid, seq, object, result)
        .map(Some)
        .map_err(fail)
}

/// The context with the fields the answer names read back from the area.
fn apply(
    data: &DataPlane,
    pid: u32,
    seq: u64,
    mut object: Value,
    result: StageResult,
) -> Result<StageContext, String> {
    let Some(names) = result.dirty_fields else {
        return Err(format!(
            "it answered a call over the stage-context area (seq {seq}) without dirty_fields"
        ));
    };
    if let Some(answered) = result.seq.filter(|s| *s != seq) {
        return Err(format!(
            "it answered for stage {answered}, the call was stage {seq}"
        ));
    }
    data.with_context(|area| {
        let dirty = area.take_dirty();
        if area.stage_seq() != seq {
            return Err(format!(
                "the area moved on to stage {} during the call (stage {seq})",
                area.stage_seq()
            ));
        }
        let mut buf = Vec::new();
        for name in &names {
            if name == NO_MEMORY {
                object["no_memory"] = Value::Bool(area.no_memory());
                continue;
            }
            let field = StageField::from_name(name).ok_or_else(|| {
                format!(
                    "dirty_fields names {name:?}, which is no field (fields: {}, {NO_MEMORY})",
                    StageField::ALL.map(StageField::name).join(", ")
                )
            })?;
            if !dirty.contains(field) {
                return Err(format!(
                    "it names {name} in dirty_fields, but nothing wrote that field during the call"
                ));
            }
            let writer = area.writer(field);
            if writer != pid {
                return Err(format!(
                    "it names {name} in dirty_fields, but process {writer} wrote that field, not \
                     the plugin (pid {pid})"
                ));
            }
            let value = area.read_json(field, &mut buf).map_err(|e| e.to_string())?;
            field.set(&mut object, value);
        }
        serde_json::from_value(object)
            .map_err(|e| format!("the fields it wrote do not fit the stage context: {e}"))
    })
}
