//! Kernel overhead per turn: ingress → scheduler → 7 stages → turn engine → provider thread →
//! event ring → reply, with a zero-latency scripted model, so everything measured is Hearth.
//! Baseline (same run): the same number of thread hops through bare crossbeam channels
//! (caller → ingress → kernel → provider → kernel → caller), i.e. the floor any design with
//! these threads pays. Budget (DESIGN §5): p50 ≤ 200 µs per turn.

use hearth_bench::{Samples, report, us};
use hearth_kernel::graph::{self, GraphConfig, Registries};
use hearth_llm::provider::ScriptedProvider;
use hearth_stages::{HandlerSpec, Stage, StageContext};
use std::sync::Arc;
use std::time::{Duration, Instant};

const WARMUP: usize = 200;
const TURNS: usize = 3_000;

fn kernel_turns(with_handlers: bool) -> Samples {
    let registries = Registries::default();
    if with_handlers {
        for stage in Stage::ALL {
            registries.stages.register(
                stage,
                HandlerSpec::new("bench"),
                hearth_stages::stage_fn(|_: &mut StageContext| Ok(())),
            );
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
    let plain = kernel_turns(false);
    let hooked = kernel_turns(true);
    report(
        "kernel turn, no stage handlers (zero-latency model)",
        &plain,
        "5 bare crossbeam thread hops",
        &floor,
        None,
    );
    report(
        "kernel turn, one no-op handler on each of the 7 stages",
        &hooked,
        "5 bare crossbeam thread hops",
        &floor,
        None,
    );
    for (name, s) in [("no handlers", &plain), ("7 handlers", &hooked)] {
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
