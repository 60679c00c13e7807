//! The stage context's JSON object over the area: the kernel stores it whole, a plugin loads it,
//! edits it and writes back only what changed; a value too large or of the wrong form is refused
//! before anything is written.

use std::time::Duration;

use hearth_ipc::{FieldError, IpcError, NO_MEMORY, SegmentConfig, StageContext, StageField};
use serde_json::json;

use crate::support::attached;
use crate::with_watchdog;

fn context() -> serde_json::Value {
    json!({
        "raw_message": "hi", "user_id": "u1", "group_id": "", "final_text": "draft",
        "response": null, "phase": "before_output",
        "context_msgs": [{"role": "user", "content": "hi"}],
        "token_usage": {"total_tokens": 12}, "errors": [], "memory": [],
        "no_memory": false,
        "extra": {"output_channel": "cli", "media_blocks": [{"kind": "image"}]}
    })
}

/// The kernel stores [`context`], the plugin loads it back.
fn loaded(kernel: &StageContext, plugin: &StageContext) -> serde_json::Value {
    kernel.store_object(&context()).expect("fits");
    kernel.take_dirty();
    plugin.load_object().expect("loads")
}

#[test]
fn a_stored_context_loads_back_and_only_changed_fields_are_written() {
    with_watchdog(Duration::from_secs(30), || {
        let (segment, plugin) = attached(SegmentConfig::default());
        let (kernel, plugin) = (segment.context(), plugin.context());
        let before = loaded(kernel, plugin);
        for field in StageField::ALL {
            assert_eq!(
                field.get(&before),
                field.get(&context()),
                "{}",
                field.name()
            );
        }
        assert_eq!(before["no_memory"], false);

        let mut after = before.clone();
        after["final_text"] = json!("FINAL");
        after["extra"]["media_type"] = json!("image/png");
        after["no_memory"] = json!(true);
        // An edit to the same value is no change.
        after["raw_message"] = json!("hi");
        let names = plugin.write_changes(&before, &after).expect("written");
        assert_eq!(names, vec!["FinalText", "Extra.media_type", NO_MEMORY]);
        let dirty: Vec<_> = kernel.take_dirty().iter().collect();
        assert_eq!(dirty, vec![StageField::FinalText, StageField::MediaType]);
        assert!(kernel.no_memory());
        let mut buf = Vec::new();
        assert_eq!(
            kernel
                .read_json(StageField::FinalText, &mut buf)
                .expect("read"),
            Some(json!("FINAL"))
        );
        // Unsetting writes the field as unset; the object then lacks it.
        let mut unset = after.clone();
        StageField::FinalText.set(&mut unset, None);
        assert_eq!(
            plugin.write_changes(&after, &unset).expect("written"),
            vec!["FinalText"]
        );
        assert_eq!(
            kernel
                .read_json(StageField::FinalText, &mut buf)
                .expect("read"),
            None
        );
    });
}

#[test]
fn an_edit_too_large_or_of_the_wrong_form_writes_nothing() {
    with_watchdog(Duration::from_secs(30), || {
        let (segment, plugin) = attached(SegmentConfig::default());
        let (kernel, plugin) = (segment.context(), plugin.context());
        let before = loaded(kernel, plugin);
        let capacity = plugin.capacity(StageField::Phase);
        let mut after = before.clone();
        after["final_text"] = json!("changed");
        after["phase"] = json!("x".repeat(capacity + 1));
        match plugin.write_changes(&before, &after) {
            Err(IpcError::Field(FieldError::TooLarge { field, len, .. })) => {
                assert_eq!((field, len), ("Phase", capacity + 1));
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
        after["phase"] = json!(7);
        assert!(matches!(
            plugin.write_changes(&before, &after),
            Err(IpcError::FieldValue { field: "Phase", .. })
        ));
        assert_eq!(kernel.take_dirty().0, 0, "nothing was written");
        // The kernel refuses a context that does not fit whole, leaving the area as it was.
        let mut huge = context();
        huge["raw_message"] = json!("r".repeat(plugin.capacity(StageField::RawMessage) + 1));
        huge["final_text"] = json!("never stored");
        assert!(kernel.store_object(&huge).is_err());
        let mut buf = Vec::new();
        assert_eq!(
            kernel
                .read_json(StageField::FinalText, &mut buf)
                .expect("read"),
            Some(json!("draft"))
        );
    });
}

#[test]
fn bytes_a_field_cannot_hold_are_refused_on_read() {
    with_watchdog(Duration::from_secs(30), || {
        let (segment, plugin) = attached(SegmentConfig::default());
        let (kernel, plugin) = (segment.context(), plugin.context());
        plugin
            .write(StageField::ContextMsgs, Some(b"[not json"))
            .expect("write");
        plugin
            .write(StageField::FinalText, Some(b"\xff\xfe"))
            .expect("write");
        let mut buf = Vec::new();
        for field in [StageField::ContextMsgs, StageField::FinalText] {
            match kernel.read_json(field, &mut buf) {
                Err(IpcError::FieldValue { field: f, .. }) => assert_eq!(f, field.name()),
                other => panic!("{}: {other:?}", field.name()),
            }
        }
        for field in StageField::ALL {
            assert_eq!(StageField::from_name(field.name()), Some(field));
        }
        assert_eq!(StageField::from_name("final_text"), None);
    });
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Whatever text and lists the kernel stores, a plugin loads the same values, and writing
    /// back an edit of one field changes exactly that field.
    #[test]
    fn any_context_round_trips_and_an_edit_touches_only_its_field(
        raw in ".{0,200}",
        final_text in ".{0,200}",
        response in proptest::option::of(".{0,50}"),
        msgs in proptest::collection::vec((".{0,10}", ".{0,80}"), 0..5),
        edit in ".{0,100}",
    ) {
        let (segment, plugin) = attached(SegmentConfig::default());
        let (kernel, plugin) = (segment.context(), plugin.context());
        let msgs: Vec<_> = msgs
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect();
        let object = json!({
            "raw_message": raw, "final_text": final_text, "response": response,
            "context_msgs": msgs, "no_memory": false,
        });
        kernel.store_object(&object).expect("fits");
        kernel.take_dirty();
        let before = plugin.load_object().expect("loads");
        for field in StageField::ALL {
            let want = field.get(&object).filter(|v| !v.is_null());
            let got = field.get(&before).filter(|v| !v.is_null());
            proptest::prop_assert_eq!(got, want, "{}", field.name());
        }
        let mut after = before.clone();
        after["final_text"] = json!(edit.clone());
        let names = plugin.write_changes(&before, &after).expect("written");
        let dirty: Vec<_> = kernel.take_dirty().iter().collect();
        if edit == final_text {
            proptest::prop_assert!(names.is_empty() && dirty.is_empty());
        } else {
            proptest::prop_assert_eq!(names, vec!["FinalText"]);
            proptest::prop_assert_eq!(dirty, vec![StageField::FinalText]);
        }
    }
}
