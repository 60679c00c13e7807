//! Timeouts, panics and concurrent use.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use hearth_stages::{HandlerSpec, Stage, StageContext, StagePipeline, stage_fn};

use crate::{call, within};

const SHORT: Duration = Duration::from_millis(100);

#[test]
fn a_hung_handler_is_abandoned_and_its_writes_discarded() {
    within(Duration::from_secs(10), || {
        let pipeline = StagePipeline::new();
        pipeline.register(
            Stage::PostAction,
            HandlerSpec::new("slow").timeout(SHORT),
            stage_fn(|ctx: &mut StageContext| {
                ctx.llm_text = "rewritten by slow".into();
                ctx.response = Some("slow says stop".into());
                thread::sleep(Duration::from_millis(1500));
                Ok(())
            }),
        );
        pipeline.register(
            Stage::PostAction,
            HandlerSpec::new("next").timeout(SHORT),
            stage_fn(|ctx: &mut StageContext| {
                ctx.final_text.push_str("next ran");
                Ok(())
            }),
        );
        let mut ctx = StageContext {
            llm_text: "original".into(),
            ..StageContext::default()
        };
        let started = Instant::now();
        let run = pipeline.run(Stage::PostAction, &call(), &mut ctx);
        let took = started.elapsed();
        assert!(took < Duration::from_millis(1000), "stage took {took:?}");
        assert_eq!(run.timed_out, ["slow"]);
        assert_eq!(run.ran, ["next"]);
        assert!(!run.responded);
        assert_eq!(ctx.llm_text, "original");
        assert_eq!(ctx.response, None);
        assert_eq!(ctx.final_text, "next ran");
        assert_eq!(ctx.errors, ["slow: handler timed out after 100ms"]);

        // A later run does not wait for the abandoned thread either, and it still isolates.
        let started = Instant::now();
        let mut again = StageContext::default();
        let run = pipeline.run(Stage::PostAction, &call(), &mut again);
        assert!(started.elapsed() < Duration::from_millis(1000));
        assert_eq!(run.timed_out, ["slow"]);
        assert_eq!(again.final_text, "next ran");
    });
}

#[test]
fn the_default_timeout_reads_5s_in_the_error() {
    let spec = HandlerSpec::new("p");
    assert_eq!(format!("{:?}", spec.timeout), "5s");
}

#[test]
fn a_panicking_handler_leaves_no_trace_but_its_error() {
    within(Duration::from_secs(10), || {
        let pipeline = StagePipeline::new();
        pipeline.register(
            Stage::OnInput,
            HandlerSpec::new("first"),
            stage_fn(|ctx: &mut StageContext| {
                ctx.final_text.push_str("first,");
                Ok(())
            }),
        );
        pipeline.register(
            Stage::OnInput,
            HandlerSpec::new("boom"),
            stage_fn(|ctx: &mut StageContext| {
                ctx.final_text = "half-written".into();
                ctx.response = Some("never".into());
                panic!("kaboom");
            }),
        );
        pipeline.register(
            Stage::OnInput,
            HandlerSpec::new("after"),
            stage_fn(|ctx: &mut StageContext| {
                ctx.final_text.push_str("after,");
                Ok(())
            }),
        );
        let mut ctx = StageContext::default();
        let run = pipeline.run(Stage::OnInput, &call(), &mut ctx);
        assert_eq!(run.panicked, ["boom"]);
        assert_eq!(run.ran, ["first", "after"]);
        assert_eq!(ctx.final_text, "first,after,");
        assert_eq!(ctx.response, None);
        assert_eq!(ctx.errors, ["boom: handler panicked: kaboom"]);

        // The runner survives a caught panic: the next run works the same way.
        let mut again = StageContext::default();
        let run = pipeline.run(Stage::OnInput, &call(), &mut again);
        assert_eq!(run.ran, ["first", "after"]);
    });
}

#[test]
fn concurrent_registration_and_runs_do_not_deadlock() {
    within(Duration::from_secs(20), || {
        let pipeline = Arc::new(StagePipeline::new());
        let calls = Arc::new(AtomicUsize::new(0));
        pipeline.register(Stage::OnInput, HandlerSpec::new("base"), {
            let calls = Arc::clone(&calls);
            stage_fn(move |ctx: &mut StageContext| {
                calls.fetch_add(1, Ordering::Relaxed);
                ctx.final_text.push('.');
                Ok(())
            })
        });
        let mut workers = Vec::new();
        for w in 0..2 {
            let pipeline = Arc::clone(&pipeline);
            workers.push(thread::spawn(move || {
                let plugin = format!("churn{w}");
                for i in 0..200 {
                    let id = pipeline.register(
                        Stage::ALL[i % 7],
                        HandlerSpec::new(plugin.clone()).priority(i as i32 % 3),
                        stage_fn(|_: &mut StageContext| Ok(())),
                    );
                    if i % 2 == 0 {
                        assert!(pipeline.unregister(id));
                    }
                }
                pipeline.unregister_plugin(&plugin)
            }));
        }
        let mut runners = Vec::new();
        for _ in 0..2 {
            let pipeline = Arc::clone(&pipeline);
            runners.push(thread::spawn(move || {
                for i in 0..200 {
                    let mut ctx = StageContext::default();
                    let run = pipeline.run(Stage::ALL[i % 7], &call(), &mut ctx);
                    if i % 7 == 0 {
                        assert!(run.ran.iter().any(|p| p == "base"));
                        assert_eq!(ctx.final_text, ".");
                    }
                }
            }));
        }
        for w in workers {
            // Each churn thread left 100 of its handlers registered until its final sweep.
            assert_eq!(w.join().expect("churn thread"), 100);
        }
        for r in runners {
            r.join().expect("run thread");
        }
        for stage in Stage::ALL {
            let expected = usize::from(stage == Stage::OnInput);
            assert_eq!(pipeline.handlers(stage), expected);
        }
        // 2 threads × ceil(200 / 7) on_input runs.
        assert_eq!(calls.load(Ordering::Relaxed), 2 * 29);
    });
}

#[test]
fn concurrent_runs_of_one_stage_do_not_share_a_runner() {
    within(Duration::from_secs(10), || {
        let pipeline = Arc::new(StagePipeline::new());
        pipeline.register(
            Stage::BeforeToolcall,
            HandlerSpec::new("wait").timeout(Duration::from_secs(3)),
            stage_fn(|ctx: &mut StageContext| {
                thread::sleep(Duration::from_millis(150));
                ctx.final_text = ctx.raw_message.clone();
                Ok(())
            }),
        );
        let handles: Vec<_> = (0..3)
            .map(|i| {
                let pipeline = Arc::clone(&pipeline);
                thread::spawn(move || {
                    let mut ctx = StageContext {
                        raw_message: format!("tool{i}"),
                        ..StageContext::default()
                    };
                    let run = pipeline.run(Stage::BeforeToolcall, &call(), &mut ctx);
                    (run, ctx)
                })
            })
            .collect();
        for (i, h) in handles.into_iter().enumerate() {
            let (run, ctx) = h.join().expect("run thread");
            // Each concurrent run got its own context back, within its own timeout.
            assert!(run.timed_out.is_empty(), "{run:?}");
            assert_eq!(ctx.final_text, format!("tool{i}"));
        }
    });
}
