//! A test hook for the systemd watchdog: with `HEARTH_TEST_WEDGE_ON` set to a message, an
//! inline `on_input` handler parks the kernel's worker for good when exactly that message
//! arrives — a really wedged kernel on its own path, not a blocked probe — so a test can see
//! `WATCHDOG=1` stop. Unset (everywhere but that test), nothing is registered.

use hearth_stages::{CallContext, HandlerError, HandlerSpec, Stage, StageContext, StagePipeline};

/// The variable naming the message that wedges the kernel.
pub(super) const VAR: &str = "HEARTH_TEST_WEDGE_ON";

/// Registers the wedging handler when [`VAR`] is set.
pub(super) fn install(stages: &StagePipeline) {
    let Some(text) = std::env::var(VAR).ok().filter(|t| !t.is_empty()) else {
        return;
    };
    tracing::warn!("{VAR} is set: the message {text:?} wedges the kernel (a test hook)");
    stages.register(
        Stage::OnInput,
        HandlerSpec::new("test-wedge").inline(),
        move |_: &CallContext, ctx: &mut StageContext| -> Result<(), HandlerError> {
            if ctx.raw_message == text {
                // Inline handlers run on the kernel's worker: nothing else runs there now.
                loop {
                    std::thread::park();
                }
            }
            Ok(())
        },
    );
}
