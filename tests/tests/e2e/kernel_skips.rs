//! Skipped replies: `empty_input`, `duplicate` (SPEC §3.2) and failures as replies.

use crate::support::{Harness, REPLY_WAIT, within};
use hearth_kernel::input::skip;
use hearth_kernel::turn::texts::{self, Lang};
use hearth_llm::provider::{ProviderError, ScriptStep};
use std::time::Duration;

#[test]
fn empty_and_duplicate_inputs_are_skipped_without_the_model() {
    within(Duration::from_secs(30), || {
        let h = Harness::new(vec![ScriptStep::text("first")]);
        let empty = h.ask("   ");
        assert!(empty.skipped);
        assert_eq!(empty.reason.as_deref(), Some(skip::EMPTY_INPUT));
        assert_eq!(h.ask("same words").content, "first");
        let dup = h.ask("same words");
        assert_eq!(dup.reason.as_deref(), Some(skip::DUPLICATE));
        assert_eq!(h.provider.request_count(), 1);
        h.kernel.shutdown();
    });
}

#[test]
fn provider_failure_and_panic_become_error_replies() {
    within(Duration::from_secs(30), || {
        let h = Harness::new(vec![
            ScriptStep::Fail(ProviderError::Status {
                status: 500,
                body: "boom".into(),
            }),
            ScriptStep::Panic("adapter bug".into()),
            ScriptStep::text("alive"),
        ]);
        let failed = h.ask("one");
        assert!(failed.error);
        assert_eq!(
            failed.content,
            texts::processing_error(Lang::En, "api error 500: boom")
        );
        let panicked = h.ask("two");
        assert!(
            panicked.error && panicked.content.contains("adapter bug"),
            "{}",
            panicked.content
        );
        assert_eq!(
            h.kernel
                .handle()
                .send_text("cli", "three")
                .recv_timeout(REPLY_WAIT)
                .expect("reply")
                .content,
            "alive"
        );
        h.kernel.shutdown();
    });
}
