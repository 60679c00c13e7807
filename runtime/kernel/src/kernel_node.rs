//! The kernel node: the input scheduler and the turn engine on one worker. They share a node
//! because the scheduler's checks at every safe point are synchronous reads of its state; a
//! round trip per step between two workers would buy nothing and cost a hop.

use crate::completion::Completion;
use crate::input::{InputEvent, skip};
use crate::turn::TurnEngine;
use crossbeam_channel::Sender;
use hearth_engine::{EdgeRx, Node, NodeCx, Poll};
use hearth_scheduler::{SchedulerSnapshot, TaskKind};
use std::time::Instant;

/// Requests about the kernel's state.
#[derive(Debug)]
pub enum Control {
    /// Asks for a snapshot of the scheduler.
    Snapshot(Sender<SchedulerSnapshot>),
    /// The only caller of this request hung up (see [`TurnEngine::abandon`]).
    Abandon(String),
}

/// The kernel's inbound edges.
#[derive(Debug)]
pub struct KernelInbox {
    /// Queued inputs from the ingress.
    pub inputs: EdgeRx<InputEvent>,
    /// Inputs the kernel gives itself.
    pub self_inputs: EdgeRx<InputEvent>,
    /// Interrupts from the ingress.
    pub interrupts: EdgeRx<InputEvent>,
    /// Results of the service threads.
    pub completions: EdgeRx<Completion>,
    /// Control requests.
    pub control: EdgeRx<Control>,
}

/// The node that runs the scheduler and the turn engine.
#[derive(Debug)]
pub struct KernelNode {
    engine: TurnEngine,
    inbox: KernelInbox,
}

impl KernelNode {
    /// A node over `engine`, reading `inbox`.
    pub fn new(engine: TurnEngine, inbox: KernelInbox) -> Self {
        Self { engine, inbox }
    }

    /// Moves arrived inputs into the ready queue while it has room (SPEC §2.7 `pumpInbox`).
    /// What does not fit stays in the edge, so the ingress answers new callers `queue_full`.
    /// Inputs resumed after a restart go first: they were accepted before anything in the edge.
    fn pump(&mut self, now: Instant) -> bool {
        let mut moved = self.engine.feed_backlog(now);
        while self.engine.has_room() && self.engine.backlog_len() == 0 {
            let (input, kind) = match self.inbox.self_inputs.try_recv() {
                Ok(i) => (i, TaskKind::SelfInput),
                Err(_) => match self.inbox.inputs.try_recv() {
                    Ok(i) => (i, TaskKind::Input),
                    Err(_) => break,
                },
            };
            moved = true;
            if let Err(mut input) = self.engine.accept_input(input, kind, now) {
                self.engine.skip_input(&mut input, skip::QUEUE_FULL);
            }
        }
        let full = !self.engine.has_room() && !self.inbox.inputs.is_empty();
        self.engine.note_backpressure(full);
        moved
    }
}

impl Node for KernelNode {
    fn name(&self) -> &str {
        "kernel"
    }

    fn poll(&mut self, cx: &mut NodeCx<'_>) -> Poll {
        let now = cx.now();
        let mut progress = false;
        while let Ok(control) = self.inbox.control.try_recv() {
            progress = true;
            match control {
                Control::Snapshot(tx) => {
                    let _ = tx.try_send(self.engine.snapshot());
                }
                Control::Abandon(request_id) => self.engine.abandon(&request_id),
            }
        }
        while let Ok(interrupt) = self.inbox.interrupts.try_recv() {
            progress = true;
            let pending = self.inbox.inputs.len() + self.engine.backlog_len();
            self.engine.accept_interrupt(interrupt, pending, now);
        }
        while let Ok(done) = self.inbox.completions.try_recv() {
            progress = true;
            self.engine.complete(done, now);
        }
        progress |= self.pump(now);
        progress |= self.engine.drive(now);
        if progress {
            Poll::Busy
        } else {
            Poll::Idle {
                until: self.engine.next_deadline(),
            }
        }
    }

    fn restart(&mut self, panic_message: &str) {
        self.engine.recover(panic_message, Instant::now());
    }

    fn shutdown(&mut self) {
        let mut replied = self.engine.shutdown();
        for rx in [
            &self.inbox.interrupts,
            &self.inbox.self_inputs,
            &self.inbox.inputs,
        ] {
            while let Ok(mut input) = rx.try_recv() {
                replied += usize::from(self.engine.end_at_shutdown(&mut input));
            }
        }
        tracing::info!(replied, "kernel stopped; every pending task was answered");
    }
}
