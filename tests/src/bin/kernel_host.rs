//! A real process hosting the kernel graph over a slow scripted model, for signal tests.
//! stdin: `input:<text>`, `interrupt:<level>:<text>`, `sync`; stdout: `ready`, `submitted N`,
//! then one JSON line per reply once SIGTERM/SIGINT arrives, then `bye`.

use hearth_kernel::graph::{self, GraphConfig, Registries};
use hearth_kernel::input::InputEvent;
use hearth_llm::provider::{ScriptStep, ScriptedProvider};
use hearth_runtime::signals::ShutdownSignals;
use serde_json::json;
use std::io::BufRead;
use std::sync::Arc;
use std::time::Duration;

fn main() {
    let signals = ShutdownSignals::install().expect("blocking signals");
    let slow = || {
        ScriptStep::slow_text(
            "a very long answer that takes its time",
            Duration::from_millis(500),
        )
    };
    let provider = Arc::new(ScriptedProvider::new((0..16).map(|_| slow())));
    let kernel = graph::build(GraphConfig::unpinned(2), provider, Registries::default())
        .expect("kernel starts");
    let handle = kernel.handle();
    println!("ready");
    let (rx_tx, rx_rx) = crossbeam_channel::unbounded();
    std::thread::spawn(move || {
        let mut submitted = 0;
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if let Some(text) = line.strip_prefix("input:") {
                let _ = rx_tx.send(handle.send_text("cli", text));
                submitted += 1;
            } else if let Some(rest) = line.strip_prefix("interrupt:") {
                let (level, text) = rest.split_once(':').unwrap_or(("L1", rest));
                let _ = rx_tx.send(handle.interrupt(
                    InputEvent::text("timer", text).with_payload("priority", json!(level)),
                ));
                submitted += 1;
            } else if line == "sync" {
                println!("submitted {submitted}");
            }
        }
    });
    let signal = signals.wait().expect("waiting for a signal");
    eprintln!("kernel_host: {signal}");
    kernel.shutdown();
    for rx in rx_rx.try_iter() {
        match rx.recv_timeout(Duration::from_secs(5)) {
            Ok(reply) => println!(
                "{}",
                serde_json::to_string(&reply).expect("reply serialises")
            ),
            Err(_) => println!("{{\"missing\":true}}"),
        }
    }
    println!("bye");
}
