//! Kernel overhead per turn: ingress → scheduler → 7 stages → turn engine → provider thread →
//! event ring → reply, with a zero-latency scripted model, so everything measured is Hearth.
//! Baseline (same run): the same number of thread hops through bare crossbeam channels
//! (caller → ingress → kernel → provider → kernel → caller), i.e. the floor any design with
//! these threads pays. Budget (DESIGN §5): p50 ≤ 200 µs per turn. With a no-op handler on each
//! of the 7 stages: inline handlers (run on the kernel's worker) ≤ 1.3× the handler-less turn of
//! the same run; blocking handlers (a stage-service job and a runner hop per stage) reported.

use hearth_bench::{Samples, report, us};
use hearth_kernel::graph::{self, GraphConfig, Registries};
use hearth_llm::provider::ScriptedProvider;
use hearth_stages::{CallContext, HandlerSpec, Stage, StageContext};
use std::sync::Arc;
use std::time::{Duration, Instant};

const WARMUP: usize = 200;
const TURNS: usize = 3_000;

/// No-op handlers on each of the 7 stages: none, inline ones, or blocking ones.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Handlers {
    None,
    Inline,
    Blocking,
}

fn kernel_turns(handlers: Handlers) -> Samples {
    let registries = Registries::default();
    if handlers != Handlers::None {
        for stage in Stage::ALL {
            let spec = HandlerSpec::new("bench");
            let spec = if handlers == Handlers::Inline {
                spec.inline()
            } else {
                spec
            };
            registries
                .stages
                .register(stage, spec, |_: &CallContext, _: &mut StageContext| Ok(()));
        }
    }
    let provider = Arc::new(ScriptedProvider::new([]));
    let turn = hearth_kernel::turn::TurnConfig {
        duplicate_window: Duration::ZERO,
        ..Default::default()
    };
    let cfg = GraphConfig {
        workers: Some(2),
        pin: true,
        turn,
        agent_id: "bench".into(),
    };
    let kernel = graph::build(cfg, provider, registries).expect("kernel starts");
    let handle = kernel.handle();
    let mut samples = Vec::with_capacity(TURNS);
    for i in 0..WARMUP + TURNS {
        let started = Instant::now();
        let reply = handle
            .send_text("cli", &format!("turn {i}"))
            .recv_timeout(Duration::from_secs(10))
            .expect("reply");
        let took = started.elapsed();
        assert!(!reply.error && !reply.skipped, "{reply:?}");
        if i >= WARMUP {
            samples.push(took);
        }
    }
    kernel.shutdown();
    Samples::new(samples)
}

/// Five hops between three threads, as a turn makes: caller → A → B → C → B → caller.
fn bare_hops() -> Samples {
    let (to_a, a_rx) = crossbeam_channel::bounded::<(u64, crossbeam_channel::Sender<u64>)>(256);
    let (to_b, b_rx) = crossbeam_channel::bounded::<(u64, crossbeam_channel::Sender<u64>)>(256);
    let (to_c, c_rx) = crossbeam_channel::bounded::<u64>(256);
    let (c_back, from_c) = crossbeam_channel::bounded::<u64>(256);
    let a = std::thread::spawn(move || {
        for msg in a_rx {
            let _ = to_b.send(msg);
        }
    });
    let b = std::thread::spawn(move || {
        for (n, reply) in b_rx {
            let _ = to_c.send(n);
            let _ = reply.send(from_c.recv().unwrap_or(n));
        }
    });
    let c = std::thread::spawn(move || {
        for n in c_rx {
            let _ = c_back.send(n + 1);
        }
    });
    let mut samples = Vec::with_capacity(TURNS);
    for i in 0..(WARMUP + TURNS) as u64 {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let started = Instant::now();
        to_a.send((i, tx)).expect("hop thread alive");
        rx.recv().expect("reply");
        if i as usize >= WARMUP {
            samples.push(started.elapsed());
        }
    }
    drop(to_a);
    for t in [a, b, c] {
        let _ = t.join();
    }
    Samples::new(samples)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("turn_overhead: bench");
        return;
    }
    let floor = bare_hops();
    let plain = kernel_turns(Handlers::None);
    let inline = kernel_turns(Handlers::Inline);
    let blocking = kernel_turns(Handlers::Blocking);
    report(
        "kernel turn, no stage handlers (zero-latency model)",
        &plain,
        "5 bare crossbeam thread hops",
        &floor,
        None,
    );
    report(
        "kernel turn, one no-op inline handler on each of the 7 stages",
        &inline,
        "the same turn without handlers",
        &plain,
        Some(1.3),
    );
    report(
        "kernel turn, one no-op blocking handler on each of the 7 stages",
        &blocking,
        "the same turn without handlers",
        &plain,
        None,
    );
    for (name, s) in [
        ("no handlers", &plain),
        ("7 inline handlers", &inline),
        ("7 blocking handlers", &blocking),
    ] {
        let p50 = us(s.p50());
        println!(
            "   {name}: {:.0} turns/s at p50, {:.1} µs/turn — budget p50 ≤ 200 µs: {}",
            1e6 / p50,
            p50,
            if p50 <= 200.0 {
                "within budget"
            } else {
                "OVER BUDGET"
            }
        );
    }
}
