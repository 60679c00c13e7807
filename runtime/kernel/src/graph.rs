//! The whole kernel topology, wired in one place (DESIGN §3).
//!
//! ```text
//!  callers ──submit──► [ingress] ──inputs/interrupts/self/control──► [kernel: scheduler + turn engine]
//!                                                                      │            ▲
//!                                                         LlmCall      ▼            │ completions
//!                                                       [provider thread] ──────────┤
//!                                                       [tool pool threads] ────────┘
//!  provider thread + kernel ──publish──► event ring ──► readers (CLI, web, plugins)
//! ```
//!
//! The kernel node lives on worker 0 and the ingress on the last worker, so on a two-core box a
//! flood of submissions is absorbed on the other core while the kernel keeps stepping tasks.

use crate::completion::Completion;
use crate::durable::{Durable, Recovered};
use crate::events::EventBus;
use crate::ingress::{IngressGate, IngressNode, IngressOut, KernelHandle, Submission};
use crate::kernel_node::{KernelInbox, KernelNode};
use crate::memory_service::{MemoryConfig, MemoryService};
use crate::provider_service::ProviderService;
use crate::stage_service::StageService;
use crate::tool_pool::{ToolEnv, ToolPool};
use crate::turn::{TurnConfig, TurnEngine};
use hearth_engine::{EdgeTx, Engine, EngineError, SendTimeoutError, ShutdownReport, Sink, edge};
use hearth_ipc::EventKind;
use hearth_llm::provider::ChatProvider;
use hearth_stages::{OutputChannels, StagePipeline, ToolRegistry};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Capacities of the kernel's edges (SPEC §1: input 256, interrupts 64, self-input 64).
pub const SUBMIT_CAPACITY: usize = 256;
/// Capacity of the queued-input edge.
pub const INPUT_CAPACITY: usize = 256;
/// Capacity of the interrupt edge.
pub const INTERRUPT_CAPACITY: usize = 64;
/// Capacity of the self-input edge.
pub const SELF_INPUT_CAPACITY: usize = 64;
const CONTROL_CAPACITY: usize = 16;
const COMPLETION_CAPACITY: usize = 1024;
/// How long shutdown waits for the ingress to confirm it forwards nothing more.
const INGRESS_CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Everything `build` needs besides the provider.
#[derive(Clone, Debug)]
pub struct GraphConfig {
    /// Worker threads; `None` = one per core.
    pub workers: Option<usize>,
    /// Pin each worker to its core.
    pub pin: bool,
    /// Settings of the turn engine.
    pub turn: TurnConfig,
    /// Name of this agent in event envelopes.
    pub agent_id: String,
}

impl Default for GraphConfig {
    fn default() -> Self {
        Self {
            workers: None,
            pin: true,
            turn: TurnConfig::default(),
            agent_id: "hearth".into(),
        }
    }
}

impl GraphConfig {
    /// `workers` worker threads left unpinned, everything else the default: a kernel that
    /// shares its cores with other work (a test, a benchmark, a host process).
    pub fn unpinned(workers: usize) -> Self {
        Self {
            workers: Some(workers),
            pin: false,
            ..Self::default()
        }
    }
}

/// The registries plugins and built-ins fill; shared with the kernel.
#[derive(Clone, Default)]
pub struct Registries {
    /// Stages run around each turn.
    pub stages: Arc<StagePipeline>,
    /// Tools the model may call.
    pub tools: Arc<ToolRegistry>,
    /// Output channels replies and tool outputs go to.
    pub outputs: Arc<OutputChannels>,
}

/// A running kernel.
pub struct Kernel {
    engine: Engine,
    handle: KernelHandle,
    gate: Arc<IngressGate>,
    ingress_worker: usize,
    registries: Registries,
    events: EventBus,
    /// The store's owner, closed at shutdown once the last answers are committed.
    store: Option<Durable>,
    /// The memory service, for the `hearth memory` control requests.
    memory: Option<MemoryService>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("workers", &self.engine.worker_count())
            .finish()
    }
}

impl Kernel {
    /// The memory service, when memory is on (graph requests for the control socket).
    pub fn memory(&self) -> Option<MemoryService> {
        self.memory.clone()
    }

    /// A handle to submit inputs and read replies.
    pub fn handle(&self) -> KernelHandle {
        self.handle.clone()
    }

    /// The registries shared with the kernel.
    pub fn registries(&self) -> &Registries {
        &self.registries
    }

    /// The event bus the kernel publishes to.
    pub fn events(&self) -> &EventBus {
        &self.events
    }

    /// The engine the kernel's nodes run on.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Stops the graph: every task still queued, suspended or running gets its terminal reply.
    /// The ingress closes first, so no submission can slip past the kernel's last drain.
    pub fn shutdown(self) -> ShutdownReport {
        self.gate.close();
        if let Some(wake) = self.engine.waker(self.ingress_worker) {
            wake.wake();
        }
        let deadline = std::time::Instant::now() + INGRESS_CLOSE_WAIT;
        while !self.gate.is_closed() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(200));
        }
        let report = self.engine.shutdown();
        // Closed, not only flushed: the file is free for the next open in this process even
        // while a handle lingers somewhere.
        if let Some(store) = &self.store
            && !store.close(STORE_CLOSE_WAIT)
        {
            tracing::warn!("the store did not confirm its last writes in time");
        }
        report
    }
}

/// How long a shutdown waits for the store to commit its last writes and close.
const STORE_CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Builds and starts the kernel graph.
pub fn build(
    cfg: GraphConfig,
    provider: Arc<dyn ChatProvider>,
    registries: Registries,
) -> Result<Kernel, EngineError> {
    let events = EventBus::with_default_ring(cfg.agent_id.clone());
    build_with(cfg, provider, registries, events, None, None)
}

/// Builds and starts the kernel graph over `events`, durable when `durability` is given (the
/// store handle and what it held at start-up).
pub fn build_with(
    cfg: GraphConfig,
    provider: Arc<dyn ChatProvider>,
    registries: Registries,
    events: EventBus,
    durability: Option<(Durable, Recovered)>,
    memory: Option<MemoryConfig>,
) -> Result<Kernel, EngineError> {
    let workers = cfg
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let panic_events = events.clone();
    let mut engine = Engine::builder()
        .workers(workers)
        .pin(cfg.pin)
        .on_node_panic(move |node, msg| {
            tracing::error!(node, "node panicked: {msg}");
            panic_events.publish(
                EventKind::System,
                &json!({"event": "node_panicked", "node": node, "error": msg}),
            );
        })
        .build()?;

    let (submit_tx, submit_rx) = edge::<Submission>(SUBMIT_CAPACITY);
    let (inputs_tx, inputs) = edge(INPUT_CAPACITY);
    let (self_tx, self_inputs) = edge(SELF_INPUT_CAPACITY);
    let (interrupts_tx, interrupts) = edge(INTERRUPT_CAPACITY);
    let (control_tx, control) = edge(CONTROL_CAPACITY);
    let (completions_tx, completions) = edge::<Completion>(COMPLETION_CAPACITY);

    let done = completion_sink(completions_tx);
    let (provider_service, _provider_thread) =
        ProviderService::start(provider, events.clone(), done.map(Completion::from));
    let env = ToolEnv {
        tools: registries.tools.clone(),
        outputs: registries.outputs.clone(),
        stages: registries.stages.clone(),
    };
    let mut store = durability.as_ref().map(|(d, _)| d.clone());
    let knowledge = memory.as_ref().and_then(|m| m.knowledge.clone());
    let memory = memory.and_then(|m| {
        // The memory service runs on the store's owner: the kernel's when it is durable, else
        // one opened for memory alone.
        let durable = match durability.as_ref() {
            Some((durable, _)) => durable.clone(),
            None => match Durable::open(&m.store, events.clone()) {
                Ok((durable, _)) => durable,
                Err(e) => {
                    tracing::error!("memory store unavailable, recall and pruning are off: {e}");
                    return None;
                }
            },
        };
        store.get_or_insert_with(|| durable.clone());
        // The graph's consolidation tasks enter like the kernel's own self-inputs: through the
        // ingress, never blocking the store's owner (a full edge drops the task; its items
        // are asked again later).
        let consolidate = {
            let submit = submit_tx.clone();
            Sink::new(move |input: crate::input::InputEvent| {
                let input = input.with_trust(crate::input::Trust::Kernel);
                if submit.try_send(Submission::SelfInput(input)).is_err() {
                    tracing::debug!(
                        "graph: consolidation task not submitted (kernel busy or stopping)"
                    );
                }
            })
        };
        Some(MemoryService::attach(
            &durable,
            m,
            done.map(Completion::from),
            Some(consolidate),
        ))
    });
    if let Some(memory) = &memory {
        crate::memory_tools::register(&registries.tools, memory);
        if let Some(settings) = knowledge {
            crate::knowledge_tools::register(&registries.tools, settings, memory.dense_slot());
        }
    }
    let mut pool = ToolPool::new(env, done.map(Completion::from));
    if let Some(store) = &store {
        pool = pool.with_media_store(store.clone());
    }
    let mut turn = TurnEngine::new(cfg.turn, provider_service, pool, events.clone());
    match StageService::start(done.map(Completion::from)) {
        Ok(service) => turn = turn.with_stage_service(service),
        Err(e) => tracing::error!(
            "cannot start the stage service, blocking stage handlers will run on the kernel's worker: {e}"
        ),
    }
    let durable = durability.as_ref().map(|(d, _)| d.clone());
    if let Some((durable, recovered)) = durability {
        turn = turn.with_durable(durable, recovered);
    }
    let memory_handle = memory.clone();
    if let Some(memory) = memory {
        turn = turn.with_memory(memory);
    }

    let kernel = KernelNode::new(
        turn,
        KernelInbox {
            inputs,
            self_inputs,
            interrupts,
            completions,
            control,
        },
    );
    let gate = Arc::new(IngressGate::default());
    let out = IngressOut {
        inputs: inputs_tx,
        self_inputs: self_tx,
        interrupts: interrupts_tx,
        control: control_tx,
    };
    let ingress = IngressNode::new(submit_rx, out, gate.clone()).with_durable(durable.clone());
    let ingress_worker = workers - 1;
    engine.spawn(0, kernel)?;
    engine.spawn(ingress_worker, ingress)?;
    engine.start()?;
    let handle = KernelHandle::new(
        submit_tx,
        events.ring().clone(),
        events.doorbells(),
        events.delta_tap(),
        gate.clone(),
        durable,
    );
    Ok(Kernel {
        engine,
        handle,
        gate,
        ingress_worker,
        registries,
        events,
        store,
        memory: memory_handle,
    })
}

/// Service threads deliver completions here, each through its own typed sink mapped into
/// [`Completion`]. They are few (one LLM call, one batch of tools) and must never be lost, so
/// a full edge is waited on rather than dropped.
fn completion_sink(tx: EdgeTx<Completion>) -> Sink<Completion> {
    Sink::new(move |completion| {
        let mut pending = completion;
        loop {
            match tx.send_timeout(pending, Duration::from_secs(1)) {
                Ok(()) => return,
                Err(SendTimeoutError::Timeout(value)) => pending = value,
                // The kernel is gone (shutdown): nobody is waiting for this result.
                Err(SendTimeoutError::Disconnected(_)) => return,
            }
        }
    })
}
