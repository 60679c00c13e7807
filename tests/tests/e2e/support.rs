//! Test harness: a kernel over a scripted provider, a watchdog, and an event-ring recorder.

use hearth_ipc::{EventKind, KindMask, ReadResult, Reader};
use hearth_kernel::graph::{self, GraphConfig, Kernel, Registries};
use hearth_kernel::input::Reply;
use hearth_kernel::turn::TurnConfig;
use hearth_llm::provider::{ScriptStep, ScriptedProvider};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use hearth_testkit::within;

pub const REPLY_WAIT: Duration = Duration::from_secs(10);

/// Registries holding one tool, [`tool`] `name` run by `handler`.
pub fn with_tool(name: &str, handler: impl hearth_stages::ToolHandler) -> Registries {
    let registries = Registries::default();
    registries
        .tools
        .register(tool(name), handler)
        .expect("registers");
    registries
}

/// A tool named `name` taking any arguments object, declaring nothing else.
pub fn tool(name: &str) -> hearth_stages::ToolDef {
    hearth_stages::ToolDef {
        name: name.into(),
        description: format!("{name} tool"),
        parameters: serde_json::json!({"type": "object"}),
        ..hearth_stages::ToolDef::default()
    }
}

pub struct Harness {
    pub kernel: Kernel,
    pub provider: Arc<ScriptedProvider>,
}

impl Harness {
    pub fn new(steps: Vec<ScriptStep>) -> Self {
        Self::with_config(steps, TurnConfig::default(), Registries::default())
    }

    pub fn with_config(steps: Vec<ScriptStep>, turn: TurnConfig, registries: Registries) -> Self {
        Self::with_provider(ScriptedProvider::new(steps), turn, registries)
    }

    /// A kernel over `provider` as it is set up (its window, whether it takes tools).
    pub fn with_provider(
        provider: ScriptedProvider,
        turn: TurnConfig,
        registries: Registries,
    ) -> Self {
        let provider = Arc::new(provider);
        let cfg = GraphConfig {
            turn,
            agent_id: "test".into(),
            ..GraphConfig::unpinned(2)
        };
        let kernel = graph::build(cfg, provider.clone(), registries).expect("kernel starts");
        Self { kernel, provider }
    }

    /// As [`Harness::with_config`], with the journal in `db`: replies and their events are
    /// published by the store's owner after the commit, as in the daemon.
    pub fn durable(steps: Vec<ScriptStep>, registries: Registries, db: &std::path::Path) -> Self {
        let provider = Arc::new(ScriptedProvider::new(steps));
        let events = hearth_kernel::events::EventBus::with_default_ring("test");
        let (durable, recovered) =
            hearth_kernel::durable::Durable::open(db, events.clone()).expect("store opens");
        let cfg = GraphConfig {
            agent_id: "test".into(),
            ..GraphConfig::unpinned(2)
        };
        let kernel = graph::build_with(
            cfg,
            provider.clone(),
            registries,
            events,
            Some((durable, recovered)),
            None,
        )
        .expect("kernel starts");
        Self { kernel, provider }
    }

    pub fn ask(&self, text: &str) -> Reply {
        self.kernel
            .handle()
            .send_text("cli", text)
            .recv_timeout(REPLY_WAIT)
            .expect("a reply")
    }

    pub fn recorder(&self) -> Recorder {
        Recorder {
            reader: self.kernel.handle().subscribe(KindMask::ALL),
            buf: Vec::new(),
        }
    }

    /// Waits until `pred` holds for the provider's request count.
    pub fn wait_requests(&self, n: usize) {
        let deadline = Instant::now() + REPLY_WAIT;
        while self.provider.request_count() < n {
            assert!(Instant::now() < deadline, "provider never saw request #{n}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Reads events off the ring as decoded `(kind, payload)` pairs.
pub struct Recorder {
    reader: Reader,
    buf: Vec<u8>,
}

impl Recorder {
    /// Everything published so far (non-blocking).
    pub fn drain(&mut self) -> Vec<(EventKind, Value)> {
        let mut out = Vec::new();
        loop {
            match self.reader.try_next(&mut self.buf) {
                ReadResult::Event { kind, .. } => out.push((kind, payload(&self.buf))),
                ReadResult::Lagged { .. } => continue,
                _ => return out,
            }
        }
    }

    /// Everything published until `n` events of `kind` are among it (or [`REPLY_WAIT`] passed).
    /// A reply is sent before its `agent_output` event is published, so a test that has its
    /// reply may still have to wait for the event.
    pub fn drain_until(&mut self, kind: EventKind, n: usize) -> Vec<(EventKind, Value)> {
        let mut seen = self.drain();
        let until = Instant::now() + REPLY_WAIT;
        while seen.iter().filter(|(k, _)| *k == kind).count() < n && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
            seen.extend(self.drain());
        }
        seen
    }

    /// Waits for the next event of `kind`.
    pub fn wait_for(&mut self, kind: EventKind, limit: Duration) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "no {} event within {limit:?}",
                kind.as_str()
            );
            if let ReadResult::Event { kind: k, .. } = self.reader.next_timeout(&mut self.buf, left)
                && k == kind
            {
                return payload(&self.buf);
            }
        }
    }
}

fn payload(bytes: &[u8]) -> Value {
    let envelope: Value = serde_json::from_slice(bytes).expect("events are JSON envelopes");
    envelope["payload"].clone()
}
