//! A plugin stage call round trip, kernel → plugin → kernel, with the stage context inline on the
//! pipe vs in the shared stage-context area, for a 10 KB and a 200 KB context (the size of the
//! conversation window in `context_msgs`). Every variant runs the kernel's real path:
//! `StagePipeline::run` → the stage proxy → a child process running a `hearth-plugin` plugin
//! whose `before_output` handler rewrites `final_text`. Inline and area alternate in batches in
//! the same run, so the inline form is the area form's baseline.
//!
//! The child is this bench binary re-executed with `--stage-child`, so no other build step is
//! needed.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use criterion::Criterion;
use hearth_bench::{Samples, report, timed};
use hearth_ipc::{SegmentConfig, StageField};
use hearth_plugin::{Plugin, Registrar, StageSpec, ToolError, json};
use hearth_plugin_host::session::Tables;
use hearth_plugin_host::{DataPlane, HostConfig, NoKernel, PluginHost, PluginState};
use hearth_stages::{CallContext, ContextMsg, Stage, StageContext};

const CHILD_FLAG: &str = "--stage-child";
const SETTLE: Duration = Duration::from_millis(30);

struct Rewriter;

impl Plugin for Rewriter {
    fn name(&self) -> &str {
        "bench-stage"
    }

    fn start(&mut self, reg: &mut Registrar<'_>) -> Result<(), ToolError> {
        reg.stage(StageSpec::new("before_output"), |_, context| {
            let text = context["final_text"].as_str().unwrap_or("").to_uppercase();
            context["final_text"] = json!(text);
            Ok(())
        })
    }
}

/// One kernel with the plugin running, over the area or inline.
struct Side {
    dir: std::path::PathBuf,
    host: Arc<PluginHost>,
    tables: Tables,
}

impl Side {
    fn start(name: &str, data: Option<Arc<DataPlane>>) -> Side {
        let dir =
            std::env::temp_dir().join(format!("hearth-stage-call-{name}-{}", std::process::id()));
        let plugin = dir.join("plugins").join("bench-stage");
        std::fs::create_dir_all(&plugin).expect("plugin dir");
        let entry = plugin.join("run.sh");
        let exe = std::env::current_exe().expect("bench binary");
        std::fs::write(
            &entry,
            format!("#!/bin/sh\nexec '{}' {CHILD_FLAG}\n", exe.display()),
        )
        .expect("entry");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::fs::write(
            plugin.join("plugin.json"),
            format!(
                r#"{{"name":"bench-stage","version":"1.0","entry":"{}"}}"#,
                entry.display()
            ),
        )
        .expect("manifest");
        let mut cfg = HostConfig::new(&dir);
        cfg.data_plane = data;
        let tables = Tables::default();
        let host = PluginHost::open(cfg, tables.clone(), Arc::new(NoKernel)).expect("host");
        host.start_all().expect("order");
        let up = host.wait_for("bench-stage", Duration::from_secs(30), |s| {
            s.state == PluginState::Running
        });
        assert_eq!(up.map(|s| s.state), Some(PluginState::Running));
        Side { dir, host, tables }
    }

    fn stop(self) {
        self.host.shutdown();
        let _ = std::fs::remove_dir_all(&self.dir);
    }

    fn run(&self, context: &StageContext, rounds: u64, samples: &mut Vec<Duration>) -> Duration {
        let call = CallContext::kernel(Duration::from_secs(60));
        timed(rounds, samples, || {
            let mut ctx = context.clone();
            let run = self.tables.stages.run(Stage::BeforeOutput, &call, &mut ctx);
            assert!(run.errors.is_empty(), "{:?}", run.errors);
            assert_eq!(ctx.final_text, "DRAFT ANSWER");
            std::hint::black_box(ctx);
        })
    }
}

fn context(window: usize) -> StageContext {
    StageContext {
        raw_message: "what is on my calendar".into(),
        final_text: "draft answer".into(),
        context_msgs: vec![ContextMsg {
            role: "user".into(),
            content: "w".repeat(window),
        }],
        ..StageContext::default()
    }
}

fn main() -> ExitCode {
    if std::env::args().any(|a| a == CHILD_FLAG) {
        return hearth_plugin::run(Rewriter);
    }
    let full = std::env::args().any(|arg| arg == "--bench");
    let (batches, rounds) = if full { (10, 200) } else { (2, 20) };
    let mut config = SegmentConfig::default();
    // Room for the 200 KB window in the area.
    config.fields[StageField::ContextMsgs as usize] = 256 * 1024;
    let plane = DataPlane::create(config).expect("segment");
    let area = Side::start("area", Some(plane));
    let inline = Side::start("inline", None);

    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    for (label, window) in [("10KB", 10 * 1024), ("200KB", 200 * 1024)] {
        let ctx = context(window);
        let (mut scratch, mut area_samples, mut inline_samples) =
            (Vec::new(), Vec::new(), Vec::new());
        area.run(&ctx, rounds / 4, &mut scratch);
        inline.run(&ctx, rounds / 4, &mut scratch);
        for _ in 0..batches {
            area.run(&ctx, rounds, &mut area_samples);
            std::thread::sleep(SETTLE);
            inline.run(&ctx, rounds, &mut inline_samples);
            std::thread::sleep(SETTLE);
        }
        report(
            &format!("plugin stage call round trip, {label} context: area vs inline"),
            &Samples::new(area_samples),
            "the same call with the context inline on the pipe",
            &Samples::new(inline_samples),
            None,
        );
        criterion.bench_function(&format!("stage_call/area_{label}"), |b| {
            b.iter_custom(|iters| area.run(&ctx, iters, &mut Vec::new()))
        });
        std::thread::sleep(SETTLE);
        criterion.bench_function(&format!("stage_call/inline_{label}"), |b| {
            b.iter_custom(|iters| inline.run(&ctx, iters, &mut Vec::new()))
        });
    }
    criterion.final_summary();
    area.stop();
    inline.stop();
    ExitCode::SUCCESS
}
