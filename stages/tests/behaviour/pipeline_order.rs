//! Order, scope, short-circuit, error collection and unregistration.

use hearth_stages::{
    HandlerSpec, Scope, Stage, StageContext, StageHandler, StagePipeline, ToolCall, ToolResult,
    stage_fn,
};
use std::time::Duration;

use crate::{call, within};

/// A handler that appends `<tag>,` to final_text.
fn mark(tag: &'static str) -> impl StageHandler {
    stage_fn(move |ctx: &mut StageContext| {
        ctx.final_text.push_str(tag);
        ctx.final_text.push(',');
        Ok(())
    })
}

#[test]
fn higher_priority_first_then_registration_order() {
    let pipeline = StagePipeline::new();
    for (tag, priority) in [("a", 0), ("b", 5), ("c", 0), ("d", 5), ("e", -1), ("f", 9)] {
        pipeline.register(
            Stage::PreAction,
            HandlerSpec::new(tag).priority(priority),
            mark(tag),
        );
    }
    let mut ctx = StageContext::default();
    let run = pipeline.run(Stage::PreAction, &call(), &mut ctx);
    assert_eq!(ctx.final_text, "f,b,d,a,c,e,");
    assert_eq!(run.ran, ["f", "b", "d", "a", "c", "e"]);
    assert_eq!(pipeline.plugins(Stage::PreAction), run.ran);
    assert!(!run.responded);
    assert_eq!(pipeline.handlers(Stage::PreAction), 6);
    assert_eq!(pipeline.handlers(Stage::OnInput), 0);
}

#[test]
fn run_sets_phase_before_handlers_see_the_context() {
    let pipeline = StagePipeline::new();
    for stage in Stage::ALL {
        pipeline.register(
            stage,
            HandlerSpec::new("p"),
            stage_fn(|ctx: &mut StageContext| {
                let phase = ctx.phase.clone();
                ctx.extra.insert("seen".into(), phase.into());
                Ok(())
            }),
        );
    }
    let mut ctx = StageContext {
        phase: "stale".into(),
        ..StageContext::default()
    };
    for stage in Stage::ALL {
        pipeline.run(stage, &call(), &mut ctx);
        assert_eq!(ctx.phase, stage.as_str());
        assert_eq!(ctx.extra["seen"], stage.as_str());
    }
}

#[test]
fn own_tools_scope_filters_on_toolcall_stages_only() {
    let pipeline = StagePipeline::new();
    for stage in Stage::ALL {
        pipeline.register(
            stage,
            HandlerSpec::new("weather").scope(Scope::OwnTools),
            mark("weather"),
        );
        pipeline.register(
            stage,
            HandlerSpec::new("news").scope(Scope::OwnTools),
            mark("news"),
        );
        pipeline.register(stage, HandlerSpec::new("audit"), mark("audit"));
    }
    let mut ctx = StageContext::default();
    ctx.tool_calls.push(ToolCall {
        name: "weather_now".into(),
        plugin: "weather".into(),
        ..ToolCall::default()
    });
    ctx.tool_results.push(ToolResult {
        name: "news_top".into(),
        plugin: "news".into(),
        ..ToolResult::default()
    });

    let run = pipeline.run(Stage::BeforeToolcall, &call(), &mut ctx);
    assert_eq!(run.ran, ["weather", "audit"]);
    assert_eq!(run.skipped_scope, ["news"]);

    let run = pipeline.run(Stage::AfterToolcall, &call(), &mut ctx);
    assert_eq!(run.ran, ["news", "audit"]);
    assert_eq!(run.skipped_scope, ["weather"]);

    for stage in [
        Stage::OnInput,
        Stage::PreAction,
        Stage::PostAction,
        Stage::BeforeOutput,
        Stage::AfterOutput,
    ] {
        // Elsewhere an own-tools handler is global, even with no tool in the context.
        let mut bare = StageContext::default();
        let run = pipeline.run(stage, &call(), &mut bare);
        assert_eq!(run.ran, ["weather", "news", "audit"], "{stage}");
        assert!(run.skipped_scope.is_empty());
    }

    // A tool context with no calls: own-tools handlers have nothing of theirs to see.
    let mut bare = StageContext::default();
    let run = pipeline.run(Stage::BeforeToolcall, &call(), &mut bare);
    assert_eq!(run.ran, ["audit"]);
}

#[test]
fn a_response_short_circuits_every_stage() {
    for stage in Stage::ALL {
        let pipeline = StagePipeline::new();
        pipeline.register(stage, HandlerSpec::new("early").priority(1), mark("early"));
        pipeline.register(
            stage,
            HandlerSpec::new("gate"),
            stage_fn(|ctx: &mut StageContext| {
                ctx.response = Some("stop here".into());
                Ok(())
            }),
        );
        pipeline.register(stage, HandlerSpec::new("late"), mark("late"));
        pipeline.register(stage, HandlerSpec::new("later").priority(-1), mark("later"));

        let mut ctx = StageContext::default();
        let run = pipeline.run(stage, &call(), &mut ctx);
        assert!(run.responded, "{stage}");
        assert_eq!(run.responded_by.as_deref(), Some("gate"), "{stage}");
        assert_eq!(run.ran, ["early", "gate"], "{stage}");
        assert_eq!(run.skipped_after_response, ["late", "later"], "{stage}");
        assert_eq!(ctx.final_text, "early,", "{stage}");
        assert_eq!(ctx.response.as_deref(), Some("stop here"));
    }
}

#[test]
fn an_empty_response_still_short_circuits() {
    let pipeline = StagePipeline::new();
    pipeline.register(
        Stage::BeforeToolcall,
        HandlerSpec::new("deny"),
        stage_fn(|ctx: &mut StageContext| {
            ctx.response = Some(String::new());
            Ok(())
        }),
    );
    pipeline.register(
        Stage::BeforeToolcall,
        HandlerSpec::new("late"),
        mark("late"),
    );
    let mut ctx = StageContext::default();
    let run = pipeline.run(Stage::BeforeToolcall, &call(), &mut ctx);
    assert!(run.responded);
    assert_eq!(ctx.final_text, "");
}

#[test]
fn a_context_already_responded_runs_no_handler() {
    let pipeline = StagePipeline::new();
    pipeline.register(Stage::OnInput, HandlerSpec::new("a"), mark("a"));
    let mut ctx = StageContext {
        response: Some("done".into()),
        ..StageContext::default()
    };
    let run = pipeline.run(Stage::OnInput, &call(), &mut ctx);
    assert!(run.responded);
    assert_eq!(run.responded_by, None);
    assert!(run.ran.is_empty());
    assert_eq!(run.skipped_after_response, ["a"]);
    assert_eq!(ctx.final_text, "");
}

#[test]
fn handler_errors_are_collected_in_order_and_writes_kept() {
    let pipeline = StagePipeline::new();
    pipeline.register(
        Stage::PostAction,
        HandlerSpec::new("a"),
        stage_fn(|ctx: &mut StageContext| {
            ctx.llm_text.push('A');
            Err("bad input".to_owned())
        }),
    );
    pipeline.register(Stage::PostAction, HandlerSpec::new("b"), mark("b"));
    pipeline.register(
        Stage::PostAction,
        HandlerSpec::new("c"),
        stage_fn(|_: &mut StageContext| Err("worse".to_owned())),
    );
    let mut ctx = StageContext {
        errors: vec!["earlier".into()],
        ..StageContext::default()
    };
    let run = pipeline.run(Stage::PostAction, &call(), &mut ctx);
    assert_eq!(ctx.errors, ["earlier", "a: bad input", "c: worse"]);
    assert_eq!(run.errors, ["a: bad input", "c: worse"]);
    assert_eq!(run.ran, ["a", "b", "c"]);
    // An Err is a normal return: the handler's writes stay.
    assert_eq!(ctx.llm_text, "A");
    assert_eq!(ctx.final_text, "b,");
}

#[test]
fn unregister_plugin_removes_it_from_every_stage() {
    let pipeline = StagePipeline::new();
    pipeline.register(Stage::OnInput, HandlerSpec::new("x"), mark("x"));
    pipeline.register(Stage::PreAction, HandlerSpec::new("x"), mark("x"));
    pipeline.register(Stage::PreAction, HandlerSpec::new("y"), mark("y"));
    pipeline.register(Stage::AfterOutput, HandlerSpec::new("x"), mark("x"));
    assert_eq!(pipeline.unregister_plugin("x"), 3);
    assert_eq!(pipeline.unregister_plugin("x"), 0);
    assert_eq!(pipeline.handlers(Stage::OnInput), 0);
    assert_eq!(pipeline.handlers(Stage::PreAction), 1);
    let mut ctx = StageContext::default();
    for stage in Stage::ALL {
        pipeline.run(stage, &call(), &mut ctx);
    }
    assert_eq!(ctx.final_text, "y,");
}

#[test]
fn registration_inside_a_handler_applies_to_the_next_run() {
    within(Duration::from_secs(10), || {
        let pipeline = std::sync::Arc::new(StagePipeline::new());
        let weak = std::sync::Arc::downgrade(&pipeline);
        pipeline.register(
            Stage::OnInput,
            HandlerSpec::new("adder"),
            stage_fn(move |ctx: &mut StageContext| {
                if let Some(p) = weak.upgrade() {
                    p.register(Stage::OnInput, HandlerSpec::new("added"), mark("added"));
                    // Re-entering the pipeline from a handler uses another runner, not a deadlock.
                    p.run(Stage::PreAction, &call(), &mut StageContext::default());
                }
                ctx.final_text.push_str("adder,");
                Ok(())
            }),
        );
        let mut ctx = StageContext::default();
        let first = pipeline.run(Stage::OnInput, &call(), &mut ctx);
        assert_eq!(first.ran, ["adder"]);
        let second = pipeline.run(Stage::OnInput, &call(), &mut ctx);
        assert_eq!(second.ran, ["adder", "added"]);
    });
}
