//! What a stage's run is made of (its registered handlers) and what it reports.

use std::sync::Arc;

use crate::{HandlerId, HandlerSpec, StageHandler};

/// A registered handler, as a run takes it from the stage's list.
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) id: HandlerId,
    pub(crate) spec: HandlerSpec,
    pub(crate) handler: Arc<dyn StageHandler>,
}

/// What one `StagePipeline::run` did, for the turn engine and for tests.
///
/// Plugin names appear once per handler, in run order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StageRun {
    /// `ctx.response` is `Some` after the stage: the caller skips the rest of its path.
    pub responded: bool,
    /// The plugin whose handler set the response during this run (`None` when it was already set).
    pub responded_by: Option<String>,
    /// Handlers that returned (`Ok` or `Err`) in time; their writes were kept.
    pub ran: Vec<String>,
    /// `Scope::OwnTools` handlers skipped because the tool is not theirs.
    pub skipped_scope: Vec<String>,
    /// Handlers not run because the response was already set.
    pub skipped_after_response: Vec<String>,
    /// Handlers abandoned at their timeout; their writes were discarded.
    pub timed_out: Vec<String>,
    /// Handlers that panicked; their writes were discarded.
    pub panicked: Vec<String>,
    /// The lines this run appended to `ctx.errors`.
    pub errors: Vec<String>,
    /// The call was cancelled during the run: the context is the one given to the stage and none
    /// of the handlers' writes were kept (`ran` still names those that had returned).
    pub cancelled: bool,
}
