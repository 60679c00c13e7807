//! Stages as requests: inline handlers on the caller's thread, blocking ones handed back as a job,
//! cancellation and deadlines.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use hearth_stages::{
    CallContext, Caller, Cancel, HandlerError, HandlerSpec, Scope, Stage, StageContext,
    StagePipeline, StageStep, ToolCall, Trust,
};
use parking_lot::Mutex;

use crate::{call, within};

/// A handler that appends `<tag>,` to final_text and records the thread it ran on.
fn traced(
    tag: &'static str,
    threads: &Arc<Mutex<Vec<(&'static str, ThreadId)>>>,
) -> impl Fn(&CallContext, &mut StageContext) -> Result<(), HandlerError> + Send + Sync + 'static {
    let threads = Arc::clone(threads);
    move |_: &CallContext, ctx: &mut StageContext| {
        threads.lock().push((tag, thread::current().id()));
        ctx.final_text.push_str(tag);
        ctx.final_text.push(',');
        Ok(())
    }
}

fn stoppable() -> (CallContext, Arc<AtomicBool>) {
    let stop = Arc::new(AtomicBool::new(false));
    let call = CallContext::new(
        3,
        Caller::new("cli", Trust::Local),
        Cancel::flag(Arc::clone(&stop)),
        Instant::now() + Duration::from_secs(60),
    );
    (call, stop)
}

#[test]
fn inline_handlers_run_on_the_callers_thread_and_finish_at_start() {
    let threads = Arc::default();
    let pipeline = StagePipeline::new();
    pipeline.register(
        Stage::OnInput,
        HandlerSpec::new("a").inline(),
        traced("a", &threads),
    );
    pipeline.register(
        Stage::OnInput,
        HandlerSpec::new("b").inline(),
        traced("b", &threads),
    );
    let step = pipeline.start(Stage::OnInput, &call(), StageContext::default());
    let StageStep::Done(done) = step else {
        panic!("an all-inline stage must not go pending: {step:?}");
    };
    assert_eq!(done.ctx.final_text, "a,b,");
    assert_eq!(done.ctx.phase, "on_input");
    assert_eq!(done.run.ran, ["a", "b"]);
    let me = thread::current().id();
    assert!(threads.lock().iter().all(|(_, t)| *t == me));
}

#[test]
fn the_first_blocking_handler_hands_the_rest_to_a_job_in_order() {
    within(Duration::from_secs(10), || {
        let threads = Arc::default();
        let pipeline = StagePipeline::new();
        // Run order by priority: i1 (inline), b1 (blocking), i2 (inline), b2 (blocking).
        pipeline.register(
            Stage::PreAction,
            HandlerSpec::new("b2"),
            traced("b2", &threads),
        );
        pipeline.register(
            Stage::PreAction,
            HandlerSpec::new("i2").inline().priority(1),
            traced("i2", &threads),
        );
        pipeline.register(
            Stage::PreAction,
            HandlerSpec::new("b1").priority(2),
            traced("b1", &threads),
        );
        pipeline.register(
            Stage::PreAction,
            HandlerSpec::new("i1").inline().priority(3),
            traced("i1", &threads),
        );
        let step = pipeline.start(Stage::PreAction, &call(), StageContext::default());
        let StageStep::Pending(job) = step else {
            panic!("a blocking handler must go pending: {step:?}");
        };
        assert_eq!(job.stage(), Stage::PreAction);
        assert_eq!(job.next_plugin(), "b1");
        // Only the leading inline handler ran before the job was handed back.
        assert_eq!(
            *threads.lock().iter().map(|t| t.0).collect::<Vec<_>>(),
            ["i1"]
        );
        let service = thread::spawn(move || (thread::current().id(), job.run()));
        let (service_id, done) = service.join().expect("service thread");
        assert_eq!(done.ctx.final_text, "i1,b1,i2,b2,");
        assert_eq!(done.run.ran, ["i1", "b1", "i2", "b2"]);
        assert!(!done.run.cancelled);
        let threads = threads.lock();
        let caller = thread::current().id();
        let on = |tag: &str| threads.iter().find(|t| t.0 == tag).expect("ran").1;
        assert_eq!(on("i1"), caller);
        // An inline handler after a blocking one runs where the job runs, without a hop.
        assert_eq!(on("i2"), service_id);
        // Blocking handlers run on a runner, neither the caller nor the service thread.
        assert!(on("b1") != caller && on("b1") != service_id);
        assert_eq!(on("b1"), on("b2"), "one runner serves the whole stage");
    });
}

#[test]
fn a_blocking_handler_that_does_not_apply_does_not_make_the_stage_pending() {
    let threads = Arc::default();
    let pipeline = StagePipeline::new();
    pipeline.register(
        Stage::BeforeToolcall,
        HandlerSpec::new("weather").scope(Scope::OwnTools),
        traced("weather", &threads),
    );
    pipeline.register(
        Stage::BeforeToolcall,
        HandlerSpec::new("audit").inline(),
        traced("audit", &threads),
    );
    let mut ctx = StageContext::default();
    ctx.tool_calls.push(ToolCall {
        plugin: "news".into(),
        ..ToolCall::default()
    });
    let step = pipeline.start(Stage::BeforeToolcall, &call(), ctx);
    let StageStep::Done(done) = step else {
        panic!("nothing blocking applies: {step:?}");
    };
    assert_eq!(done.run.ran, ["audit"]);
    assert_eq!(done.run.skipped_scope, ["weather"]);
}

#[test]
fn a_panicking_inline_handler_leaves_the_context_unchanged() {
    let pipeline = StagePipeline::new();
    pipeline.register(
        Stage::PostAction,
        HandlerSpec::new("boom").inline(),
        |_: &CallContext, ctx: &mut StageContext| {
            ctx.llm_text = "half-written".into();
            ctx.response = Some("never".into());
            panic!("inline kaboom")
        },
    );
    pipeline.register(
        Stage::PostAction,
        HandlerSpec::new("after").inline(),
        |_: &CallContext, ctx: &mut StageContext| {
            ctx.final_text.push_str("after");
            Ok(())
        },
    );
    let mut ctx = StageContext {
        llm_text: "original".into(),
        ..StageContext::default()
    };
    let run = pipeline.run(Stage::PostAction, &call(), &mut ctx);
    assert_eq!(run.panicked, ["boom"]);
    assert_eq!(run.ran, ["after"]);
    assert_eq!(ctx.llm_text, "original");
    assert_eq!(ctx.response, None);
    assert_eq!(ctx.errors, ["boom: handler panicked: inline kaboom"]);
}

#[test]
fn every_error_kind_is_recorded_with_its_text_and_keeps_the_writes() {
    let pipeline = StagePipeline::new();
    let kinds = [
        HandlerError::InvalidArguments("bad field".into()),
        HandlerError::Denied("not allowed".into()),
        HandlerError::TimedOut,
        HandlerError::Cancelled,
        HandlerError::Unavailable("backend down".into()),
        HandlerError::Failed("broke".into()),
    ];
    for (i, err) in kinds.iter().enumerate() {
        let err = err.clone();
        pipeline.register(
            Stage::AfterToolcall,
            HandlerSpec::new(format!("p{i}")).inline(),
            move |_: &CallContext, ctx: &mut StageContext| {
                ctx.final_text.push('.');
                Err(err.clone())
            },
        );
    }
    let mut ctx = StageContext::default();
    let run = pipeline.run(Stage::AfterToolcall, &call(), &mut ctx);
    assert_eq!(
        run.errors,
        [
            "p0: invalid arguments: bad field",
            "p1: denied: not allowed",
            "p2: timed out",
            "p3: cancelled",
            "p4: unavailable: backend down",
            "p5: broke",
        ]
    );
    assert_eq!(ctx.errors, run.errors);
    assert_eq!(ctx.final_text, "......", "an Err is a normal return");
    assert_eq!(run.ran.len(), 6);
    assert!(run.timed_out.is_empty() && !run.cancelled);
}

#[test]
fn a_stop_ends_a_job_at_once_and_discards_every_write_of_the_stage() {
    within(Duration::from_secs(10), || {
        let pipeline = StagePipeline::new();
        pipeline.register(
            Stage::OnInput,
            HandlerSpec::new("early").inline().priority(1),
            |_: &CallContext, ctx: &mut StageContext| {
                ctx.final_text.push_str("early wrote");
                Ok(())
            },
        );
        pipeline.register(
            Stage::OnInput,
            HandlerSpec::new("sleeper"),
            |_: &CallContext, ctx: &mut StageContext| {
                ctx.final_text.push_str("sleeper wrote");
                thread::sleep(Duration::from_secs(3));
                Ok(())
            },
        );
        let late_ran = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&late_ran);
        pipeline.register(
            Stage::OnInput,
            HandlerSpec::new("late").inline().priority(-1),
            move |_: &CallContext, _: &mut StageContext| {
                flag.store(true, Ordering::SeqCst);
                Ok(())
            },
        );
        let (call, stop) = stoppable();
        let given = StageContext {
            raw_message: "hello".into(),
            ..StageContext::default()
        };
        let StageStep::Pending(job) = pipeline.start(Stage::OnInput, &call, given) else {
            panic!("a blocking handler is on on_input");
        };
        let service = thread::spawn(move || {
            let done = job.run();
            (done, Instant::now())
        });
        thread::sleep(Duration::from_millis(100));
        let stopped = Instant::now();
        stop.store(true, Ordering::Release);
        let (done, ended) = service.join().expect("service thread");
        let took = ended.duration_since(stopped);
        assert!(
            took < Duration::from_millis(50),
            "the job ended {took:?} after the stop"
        );
        assert!(done.run.cancelled);
        assert_eq!(done.ctx.raw_message, "hello");
        assert_eq!(
            done.ctx.final_text, "",
            "the inline write before the job is discarded too"
        );
        assert_eq!(done.ctx.phase, "on_input");
        assert!(
            !late_ran.load(Ordering::SeqCst),
            "nothing runs after a stop"
        );
        assert_eq!(done.run.ran, ["early"]);
        assert!(done.run.timed_out.is_empty());
    });
}

#[test]
fn a_call_cancelled_before_the_stage_runs_no_handler() {
    let pipeline = StagePipeline::new();
    let ran = Arc::new(AtomicBool::new(false));
    for spec in [HandlerSpec::new("i").inline(), HandlerSpec::new("b")] {
        let ran = Arc::clone(&ran);
        pipeline.register(
            Stage::AfterOutput,
            spec,
            move |_: &CallContext, _: &mut StageContext| {
                ran.store(true, Ordering::SeqCst);
                Ok(())
            },
        );
    }
    let (call, stop) = stoppable();
    stop.store(true, Ordering::Release);
    let mut ctx = StageContext::default();
    let run = pipeline.run(Stage::AfterOutput, &call, &mut ctx);
    assert!(run.cancelled);
    assert!(run.ran.is_empty());
    assert!(!ran.load(Ordering::SeqCst));
}

#[test]
fn a_handler_sees_the_task_its_trust_and_a_deadline_no_later_than_its_timeout() {
    let seen = Arc::new(Mutex::new(None));
    let pipeline = StagePipeline::new();
    let log = Arc::clone(&seen);
    pipeline.register(
        Stage::PreAction,
        HandlerSpec::new("p").timeout(Duration::from_millis(300)),
        move |call: &CallContext, _: &mut StageContext| {
            *log.lock() = Some((call.task_id(), call.trust(), call.remaining()));
            Ok(())
        },
    );
    let (call, _stop) = stoppable();
    pipeline.run(Stage::PreAction, &call, &mut StageContext::default());
    let (task, trust, remaining) = seen.lock().take().expect("the handler ran");
    assert_eq!((task, trust), (3, Trust::Local));
    assert!(remaining <= Duration::from_millis(300), "{remaining:?}");
    assert!(remaining > Duration::from_millis(100), "{remaining:?}");
}

#[test]
fn the_callers_deadline_cuts_a_handler_short_and_an_expired_one_runs_nothing() {
    within(Duration::from_secs(10), || {
        let pipeline = StagePipeline::new();
        pipeline.register(
            Stage::PostAction,
            HandlerSpec::new("slow"),
            |_: &CallContext, ctx: &mut StageContext| {
                thread::sleep(Duration::from_millis(1500));
                ctx.final_text.push_str("slow wrote");
                Ok(())
            },
        );
        let soon = CallContext::new(
            1,
            Caller::kernel(),
            Cancel::never(),
            Instant::now() + Duration::from_millis(150),
        );
        let started = Instant::now();
        let mut ctx = StageContext::default();
        let run = pipeline.run(Stage::PostAction, &soon, &mut ctx);
        let took = started.elapsed();
        assert!(
            took < Duration::from_millis(1000),
            "waited {took:?} past the caller's deadline"
        );
        assert_eq!(run.timed_out, ["slow"]);
        assert_eq!(ctx.final_text, "");
        assert!(
            run.errors[0].starts_with("slow: handler timed out after 1"),
            "{:?}",
            run.errors
        );

        // Past its deadline, no handler is even started.
        let called = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&called);
        pipeline.register(
            Stage::OnInput,
            HandlerSpec::new("inline").inline(),
            move |_: &CallContext, _: &mut StageContext| {
                flag.store(true, Ordering::SeqCst);
                Ok(())
            },
        );
        let expired = CallContext::new(1, Caller::kernel(), Cancel::never(), Instant::now());
        let run = pipeline.run(Stage::OnInput, &expired, &mut StageContext::default());
        assert_eq!(run.timed_out, ["inline"]);
        assert!(!called.load(Ordering::SeqCst));
    });
}
