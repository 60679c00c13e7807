//! Output channels: registration rule, generated tools, and output_send semantics.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hearth_stages::{
    CAP_AUDIO, CAP_IMAGE, CAP_TEXT, CallContext, Caller, Cancel, Caps, HandlerError, HandlerSpec,
    OutputChannels, OutputHandler, Stage, StageContext, StagePipeline, StagesError, Trust,
    output_fn, stage_fn, valid_function_name,
};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::call;

/// What a channel handler was asked to send.
type Sent = Arc<Mutex<Vec<(String, String, Option<Value>)>>>;

/// A channel handler that records each send in `sent` and answers `reply`.
fn recorder(sent: &Sent, reply: Result<Value, String>) -> impl OutputHandler {
    let log = Arc::clone(sent);
    output_fn(move |payload: &str, kind: &str, meta: Option<&Value>| {
        log.lock()
            .push((payload.to_owned(), kind.to_owned(), meta.cloned()));
        reply.clone()
    })
}

fn qq(reply: Result<Value, String>) -> (OutputChannels, Sent) {
    let channels = OutputChannels::new();
    let sent = Sent::default();
    channels
        .register(
            "qq",
            CAP_TEXT | CAP_IMAGE,
            "QQ group chat",
            recorder(&sent, reply),
        )
        .expect("valid channel");
    (channels, sent)
}

fn send(
    channels: &OutputChannels,
    pipeline: &StagePipeline,
    args: Value,
) -> Result<String, HandlerError> {
    channels
        .dispatch(&call(), "output_send__qq", &args, pipeline)
        .expect("an output tool")
}

#[test]
fn registration_enforces_the_name_rule_and_capabilities() {
    let channels = OutputChannels::new();
    let ok = || output_fn(|_: &str, _: &str, _: Option<&Value>| Ok(Value::Null));
    assert!(channels.register("device-1", CAP_TEXT, "d", ok()).is_ok());
    assert!(
        channels
            .register(&"n".repeat(46), CAP_TEXT, "d", ok())
            .is_ok()
    );
    for bad in ["", "device/1", "a.b", "qq_help", &"n".repeat(47)] {
        assert!(
            matches!(
                channels.register(bad, CAP_TEXT, "d", ok()),
                Err(StagesError::InvalidChannelName { .. })
            ),
            "{bad:?}"
        );
    }
    assert!(matches!(
        channels.register("mute", Caps(0), "d", ok()),
        Err(StagesError::NoCapabilities { .. })
    ));
    assert_eq!(channels.len(), 2);
    // Registering a name again replaces it in place.
    assert!(
        channels
            .register("device-1", CAP_AUDIO, "speaker", ok())
            .is_ok()
    );
    assert_eq!(channels.len(), 2);
    assert_eq!(channels.caps_of("device-1"), Some(CAP_AUDIO));
    assert!(channels.unregister("device-1"));
    assert!(!channels.unregister("device-1"));
    assert_eq!(channels.caps_of("device-1"), None);
}

#[test]
fn generated_tools_and_their_parameters() {
    let channels = OutputChannels::new();
    assert!(channels.tool_defs().is_empty(), "no channel, no list tool");
    let ok = || output_fn(|_: &str, _: &str, _: Option<&Value>| Ok(Value::Null));
    channels
        .register("qq", CAP_TEXT, "QQ", ok())
        .expect("valid");
    channels
        .register("speaker", CAP_AUDIO, "Kitchen speaker", ok())
        .expect("valid");
    let defs = channels.tool_defs();
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "output_send__qq",
            "output_send__qq_help",
            "output_send__speaker",
            "output_send__speaker_help",
            "output_list_channels",
        ]
    );
    for d in &defs {
        assert!(valid_function_name(&d.name), "{}", d.name);
        assert_eq!(d.parameters["type"], "object");
    }
    let p = &defs[0].parameters;
    assert_eq!(p["required"], json!(["payload"]));
    assert_eq!(p["properties"]["payload"]["type"], "string");
    assert_eq!(p["properties"]["meta"]["type"], "string");
    assert_eq!(
        p["properties"]["type"]["enum"],
        json!(["text", "voice", "image", "file"])
    );
    assert_eq!(p["properties"]["type"]["default"], "text");
    assert!(defs[0].description.contains("QQ"));
    assert_eq!(defs[1].parameters["properties"], json!({}));
    assert!(!defs[0].parallel_safe, "sends keep their order");
    assert!(defs[1].parallel_safe && defs[4].parallel_safe);
    channels.unregister("qq");
    channels.unregister("speaker");
    assert!(channels.tool_defs().is_empty());
}

#[test]
fn a_confirmed_send_answers_exactly_ok() {
    let (channels, sent) = qq(Ok(json!({"status": "sent", "message_id": 42})));
    let pipeline = StagePipeline::new();
    let out = send(
        &channels,
        &pipeline,
        json!({"payload": "hello", "meta": "{\"group_id\": \"123\"}"}),
    );
    assert_eq!(out, Ok("ok".to_owned()));
    assert_eq!(
        *sent.lock(),
        [(
            "hello".to_owned(),
            "text".to_owned(),
            Some(json!({"group_id": "123"}))
        )]
    );
}

#[test]
fn before_output_may_rewrite_block_or_clear_the_payload() {
    let (channels, sent) = qq(Ok(Value::Null));
    let pipeline = StagePipeline::new();
    let seen = Arc::new(Mutex::new(String::new()));
    let seen_in = Arc::clone(&seen);
    pipeline.register(
        Stage::BeforeOutput,
        HandlerSpec::new("filter"),
        stage_fn(move |ctx: &mut StageContext| {
            *seen_in.lock() = ctx.extra["output_channel"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            match ctx.final_text.as_str() {
                "swear" => ctx.response = Some("no swearing".into()),
                "secret" => ctx.final_text.clear(),
                _ => ctx.final_text = ctx.final_text.to_uppercase(),
            }
            Ok(())
        }),
    );
    assert_eq!(
        send(&channels, &pipeline, json!({"payload": "hi"})),
        Ok("ok".into())
    );
    assert_eq!(seen.lock().as_str(), "qq");
    assert_eq!(
        send(&channels, &pipeline, json!({"payload": "swear"})),
        Err(HandlerError::Denied(
            "blocked by a plugin: no swearing".into()
        ))
    );
    assert_eq!(
        send(&channels, &pipeline, json!({"payload": "secret"})),
        Err(HandlerError::Denied("cleared by a plugin".into()))
    );
    let sent = sent.lock();
    assert_eq!(sent.len(), 1, "blocked and cleared payloads are never sent");
    assert_eq!(sent[0].0, "HI");
}

#[test]
fn capabilities_are_checked_by_type_before_anything_runs() {
    let (channels, sent) = qq(Ok(Value::Null));
    let pipeline = StagePipeline::new();
    pipeline.register(
        Stage::BeforeOutput,
        HandlerSpec::new("spy"),
        stage_fn(|_: &mut StageContext| {
            Err("before_output must not run for a refused type".to_owned())
        }),
    );
    for kind in ["voice", "audio", "file"] {
        let out = send(&channels, &pipeline, json!({"payload": "x", "type": kind}));
        assert_eq!(
            out,
            Err(HandlerError::InvalidArguments(format!(
                "channel [qq] cannot send type {kind} (it supports: text, image)"
            )))
        );
    }
    let out = send(
        &channels,
        &pipeline,
        json!({"payload": "x", "type": "video"}),
    );
    let err = out.expect_err("unknown type");
    assert_eq!(err.kind(), "invalid_arguments");
    assert!(
        err.to_string().contains("text, voice, image, file"),
        "{err}"
    );
    assert!(sent.lock().is_empty());
    // image is allowed: it reaches before_output (which errs, but does not block) and is sent.
    let out = send(
        &channels,
        &pipeline,
        json!({"payload": "/tmp/a.png", "type": "image"}),
    );
    assert_eq!(out, Ok("ok".into()));
    assert_eq!(sent.lock()[0].1, "image");
}

#[test]
fn a_channel_failure_is_reported_with_its_name() {
    let (channels, _) = qq(Err("bridge offline".into()));
    let out = send(&channels, &StagePipeline::new(), json!({"payload": "hi"}));
    assert_eq!(
        out,
        Err(HandlerError::Failed(
            "sending through [qq] failed: bridge offline".into()
        ))
    );
    // The channel's own kind survives the added context.
    let channels = OutputChannels::new();
    channels
        .register(
            "speaker",
            CAP_TEXT,
            "Kitchen speaker",
            |_: &CallContext, _: &str, _: &str, _: Option<&Value>| {
                Err(HandlerError::Unavailable("asleep".into()))
            },
        )
        .expect("valid channel");
    let out = channels
        .dispatch(
            &call(),
            "output_send__speaker",
            &json!({"payload": "hi"}),
            &StagePipeline::new(),
        )
        .expect("an output tool");
    assert_eq!(
        out,
        Err(HandlerError::Unavailable(
            "sending through [speaker] failed: asleep".into()
        ))
    );
}

#[test]
fn the_channel_and_before_output_see_the_callers_context_and_a_stop() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let channels = OutputChannels::new();
    let log = Arc::clone(&seen);
    channels
        .register(
            "qq",
            CAP_TEXT,
            "QQ",
            move |call: &CallContext, _: &str, _: &str, _: Option<&Value>| {
                log.lock().push((call.task_id(), call.trust()));
                Ok(Value::Null)
            },
        )
        .expect("valid channel");
    let pipeline = StagePipeline::new();
    pipeline.register(
        Stage::BeforeOutput,
        HandlerSpec::new("filter"),
        |call: &CallContext, ctx: &mut StageContext| {
            ctx.final_text = format!("{} (for {})", ctx.final_text, call.caller().source);
            Ok(())
        },
    );
    let stop = Arc::new(AtomicBool::new(false));
    let call = CallContext::new(
        9,
        Caller::new("qq", Trust::External),
        Cancel::flag(Arc::clone(&stop)),
        Instant::now() + Duration::from_secs(60),
    );
    let out = channels.dispatch(
        &call,
        "output_send__qq",
        &json!({"payload": "hi"}),
        &pipeline,
    );
    assert_eq!(out, Some(Ok("ok".into())));
    assert_eq!(*seen.lock(), [(9, Trust::External)]);
    stop.store(true, Ordering::Release);
    let out = channels.dispatch(
        &call,
        "output_send__qq",
        &json!({"payload": "hi"}),
        &pipeline,
    );
    assert_eq!(out, Some(Err(HandlerError::Cancelled)));
    assert_eq!(seen.lock().len(), 1, "a stopped call delivers nothing");
}

#[test]
fn an_unconfirmed_or_queued_delivery_says_so_with_its_note() {
    let (channels, _) = qq(Ok(json!({"status": "unconfirmed", "note": "phone asleep"})));
    let out = send(&channels, &StagePipeline::new(), json!({"payload": "hi"})).expect("sent");
    assert!(
        out.contains("unconfirmed") && out.contains("phone asleep"),
        "{out}"
    );
    assert_ne!(out, "ok");

    let (channels, _) = qq(Ok(json!({"status": "queued"})));
    let out = send(&channels, &StagePipeline::new(), json!({"payload": "hi"})).expect("sent");
    assert!(
        out.contains("unconfirmed") && out.contains("queued"),
        "{out}"
    );
}

#[test]
fn empty_payloads_unknown_channels_and_bad_meta_get_usage_messages() {
    let (channels, sent) = qq(Ok(Value::Null));
    let pipeline = StagePipeline::new();
    for args in [json!({}), json!({"payload": ""}), json!({"payload": null})] {
        let out = send(&channels, &pipeline, args).expect_err("usage");
        assert_eq!(out.kind(), "invalid_arguments");
        assert!(
            out.to_string()
                .starts_with("invalid arguments: usage: output_send__qq("),
            "{out}"
        );
    }
    let out = channels
        .dispatch(
            &call(),
            "output_send__",
            &json!({"payload": "x"}),
            &pipeline,
        )
        .expect("output tool")
        .expect_err("usage");
    assert!(
        out.to_string()
            .starts_with("invalid arguments: usage: output_send__<channel>("),
        "{out}"
    );
    let out = channels
        .dispatch(
            &call(),
            "output_send__wechat",
            &json!({"payload": "x"}),
            &pipeline,
        )
        .expect("output tool")
        .expect_err("unknown");
    assert_eq!(out.kind(), "unavailable");
    assert!(
        out.to_string().contains("unknown output channel [wechat]"),
        "{out}"
    );
    let out = send(
        &channels,
        &pipeline,
        json!({"payload": "x", "meta": "{group"}),
    )
    .expect_err("meta");
    assert!(
        out.to_string()
            .starts_with("invalid arguments: meta must be a JSON object string"),
        "{out}"
    );
    assert!(sent.lock().is_empty());
    // Arguments given as a JSON string and meta given as an object are accepted.
    let out = send(
        &channels,
        &pipeline,
        json!("{\"payload\": \"hi\", \"meta\": {\"user_id\": \"7\"}}"),
    );
    assert_eq!(out, Ok("ok".into()));
    assert_eq!(sent.lock()[0].2, Some(json!({"user_id": "7"})));
}

#[test]
fn help_and_list_texts() {
    let (channels, _) = qq(Ok(Value::Null));
    let pipeline = StagePipeline::new();
    assert!(
        channels
            .dispatch(&call(), "memory_search", &json!({}), &pipeline)
            .is_none()
    );
    let help = channels
        .dispatch(&call(), "output_send__qq_help", &json!({}), &pipeline)
        .expect("output tool")
        .expect("known channel");
    for needle in [
        "QQ group chat",
        "text, image",
        "payload",
        "group_id",
        "user_id",
        "reply_to",
        "example: output_send__qq(",
    ] {
        assert!(help.contains(needle), "help lacks {needle:?}:\n{help}");
    }
    let unknown = channels
        .dispatch(&call(), "output_send__nope_help", &json!({}), &pipeline)
        .expect("output tool");
    assert!(unknown.is_err());
    let list = channels
        .dispatch(&call(), "output_list_channels", &json!({}), &pipeline)
        .expect("output tool")
        .expect("list");
    assert!(list.contains("[qq] QQ group chat"), "{list}");
    assert!(
        list.contains("output_send__qq, output_send__qq_help"),
        "{list}"
    );
    let empty = OutputChannels::new()
        .dispatch(&call(), "output_list_channels", &json!({}), &pipeline)
        .expect("output tool")
        .expect("list");
    assert_eq!(empty, "no output channels are registered");
}
