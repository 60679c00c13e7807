//! The front door: callers (the CLI socket, web, timers, plugins) submit through a
//! [`KernelHandle`]; the ingress node stamps and forwards in arrival order to the kernel's edges.
//! A full edge is answered at once with a `queue_full` skipped reply — backpressure, never a
//! caller left waiting and never a silent drop.

use crate::KernelError;
use crate::durable::Durable;
use crate::events::DeltaTapSlot;
use crate::input::{InputEvent, Reply, Trust, skip};
use crate::kernel_node::Control;
use crossbeam_channel::Receiver;
use hearth_engine::{EdgeRx, EdgeTx, Node, NodeCx, Poll, TrySendError};
use hearth_ipc::{Doorbells, KindMask, Reader, Subscriber};
use hearth_scheduler::SchedulerSnapshot;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Closes the front door before the graph stops, so nothing is forwarded to a kernel that has
/// already answered its last task: every late submission is answered `shutdown` here instead.
#[derive(Debug, Default)]
pub struct IngressGate {
    closing: AtomicBool,
    closed: AtomicBool,
}

impl IngressGate {
    /// Closes the gate: the ingress forwards nothing more.
    pub fn close(&self) {
        // SYNC: pairs with the Acquire load in `is_closing` (handle and ingress node).
        self.closing.store(true, Ordering::Release);
    }

    fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    /// True once the ingress has run a whole poll after `close`: it forwards nothing more.
    pub fn is_closed(&self) -> bool {
        // SYNC: pairs with the Release store in `IngressNode::poll`.
        self.closed.load(Ordering::Acquire)
    }
}

/// What a caller hands in.
#[derive(Debug)]
pub enum Submission {
    /// An ordinary (queued-class) input.
    Input(InputEvent),
    /// An interrupt; its level comes from `payload.priority`.
    Interrupt(InputEvent),
    /// A kernel self-input (consolidation, notices).
    SelfInput(InputEvent),
    /// A request about the kernel's state.
    Control(Control),
}

/// Cloneable handle through which everything reaches the kernel.
#[derive(Clone, Debug)]
pub struct KernelHandle {
    submit: EdgeTx<Submission>,
    ring: Subscriber,
    doorbells: Doorbells,
    tap: DeltaTapSlot,
    gate: Arc<IngressGate>,
    durable: Option<Durable>,
}

impl KernelHandle {
    pub(crate) fn new(
        submit: EdgeTx<Submission>,
        ring: Subscriber,
        doorbells: Doorbells,
        tap: DeltaTapSlot,
        gate: Arc<IngressGate>,
        durable: Option<Durable>,
    ) -> Self {
        Self {
            submit,
            ring,
            doorbells,
            tap,
            gate,
            durable,
        }
    }

    /// The ring publisher's doorbell list, for a reader that sleeps in its own `poll`.
    pub fn ring_doorbells(&self) -> Doorbells {
        self.doorbells.clone()
    }

    /// Where a tap on the streamed deltas is installed (the socket server's direct writes).
    pub fn delta_tap(&self) -> DeltaTapSlot {
        self.tap.clone()
    }

    /// Journals `input` (when the kernel is durable) and submits it, without waiting: the store's
    /// owner offers it to the kernel once the commit that holds it is done (many clients'
    /// inputs share one commit). Its admission is then told to the input's
    /// [`ReplyListener`](crate::input::ReplyListener), and a refusal (`queue_full`, `shutdown`)
    /// is journaled as the input's end before its reply is sent, so it never runs again after a
    /// restart; an input the journal cannot take is answered with an error. The reply arrives on
    /// the channel the caller attached. `Err` when it was answered at once (denied, or the
    /// store has stopped).
    /// An input its trust does not allow is answered `denied` and never journaled.
    pub fn submit_durably(
        &self,
        mut input: InputEvent,
        interrupt: bool,
    ) -> Result<(), KernelError> {
        if crate::admission::deny_if_refused(&mut input) {
            return Err(KernelError::Denied);
        }
        let Some(durable) = &self.durable else {
            self.send(wrap(input, interrupt));
            return Ok(());
        };
        let kind = if interrupt { "interrupt" } else { "input" };
        let (gate, submit) = (self.gate.clone(), self.submit.clone());
        // Offered from the store's owner once the commit holding it is done, so the kernel
        // never sees an input the journal lacks.
        let offer = Box::new(move |input| {
            offer(&gate, &submit, wrap(input, interrupt)).map(|(submission, reason)| {
                let (Submission::Input(mut i) | Submission::Interrupt(mut i)) = submission else {
                    unreachable!("an input or interrupt was offered");
                };
                (i.take_reply(), skip_reply(reason))
            })
        });
        durable.accept_then(input, kind, offer)
    }

    fn send(&self, mut submission: Submission) {
        if let Submission::Input(i) | Submission::Interrupt(i) | Submission::SelfInput(i) =
            &mut submission
            && crate::admission::deny_if_refused(i)
        {
            return;
        }
        if let Some((submission, reason)) = offer(&self.gate, &self.submit, submission) {
            refuse(submission, reason);
        }
    }

    /// Submits an input and returns where its one reply will arrive.
    pub fn submit(&self, mut input: InputEvent) -> Receiver<Reply> {
        let rx = input.reply_channel();
        self.send(Submission::Input(input));
        rx
    }

    /// Submits an input whose reply channel the caller attached already.
    pub fn submit_with(&self, input: InputEvent) {
        self.send(Submission::Input(input));
    }

    /// Submits an interrupt whose reply channel the caller attached already.
    pub fn interrupt_with(&self, input: InputEvent) {
        self.send(Submission::Interrupt(input));
    }

    /// Convenience: a text input from a built-in channel.
    pub fn send_text(&self, source: &str, text: &str) -> Receiver<Reply> {
        self.submit(InputEvent::text(source, text))
    }

    /// Submits an interrupt (level from `payload.priority`, L1 when undeclared).
    pub fn interrupt(&self, mut input: InputEvent) -> Receiver<Reply> {
        let rx = input.reply_channel();
        self.send(Submission::Interrupt(input));
        rx
    }

    /// Submits a self-input (the kernel's own: consolidation, notices); it has no caller
    /// waiting for a reply and it runs with the kernel's trust.
    pub fn self_input(&self, input: InputEvent) {
        self.send(Submission::SelfInput(input.with_trust(Trust::Kernel)));
    }

    /// The stop button (SPEC §2.8): cancels the in-flight generation and the inputs queued now.
    /// In-process callers are local and trusted (the CLI socket calls this after its peer
    /// check); a stop from anywhere else arrives as an external interrupt and is denied.
    pub fn stop(&self, source: &str) -> Receiver<Reply> {
        self.interrupt(stop_input(source))
    }

    /// The scheduler's state, or None if the kernel did not answer in time.
    pub fn snapshot(&self, timeout: Duration) -> Option<SchedulerSnapshot> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.send(Submission::Control(Control::Snapshot(tx)));
        rx.recv_timeout(timeout).ok()
    }

    /// Tells the kernel that the only caller of `request_id` is gone (its client hung up
    /// before the answer): the task's LLM call is cut and it ends journaled as `cancelled`.
    pub fn abandon(&self, request_id: &str) {
        self.send(Submission::Control(Control::Abandon(
            request_id.to_string(),
        )));
    }

    /// The event ring itself (how far it has been published, new readers).
    pub fn ring(&self) -> &Subscriber {
        &self.ring
    }

    /// A reader of the event ring (`KindMask` selects event kinds).
    pub fn subscribe(&self, mask: KindMask) -> Reader {
        self.ring.reader(mask)
    }
}

/// The stop button's input, for callers that attach their own reply channel and submit it with
/// [`KernelHandle::interrupt_with`].
pub fn stop_input(source: &str) -> InputEvent {
    let mut payload = Map::new();
    payload.insert("content".into(), Value::String(String::new()));
    payload.insert("stop".into(), Value::Bool(true));
    payload.insert("interrupt".into(), Value::Bool(true));
    payload.insert("priority".into(), Value::String("L4".into()));
    InputEvent::new(source, payload).with_trust(Trust::Local)
}

/// Hands `submission` to the ingress, or gives it back with the reason it was refused.
fn offer(
    gate: &IngressGate,
    submit: &EdgeTx<Submission>,
    submission: Submission,
) -> Option<(Submission, &'static str)> {
    if gate.is_closing() {
        return Some((submission, skip::SHUTDOWN));
    }
    submit.try_send(submission).err().map(|e| {
        let reason = if e.is_full() {
            skip::QUEUE_FULL
        } else {
            skip::SHUTDOWN
        };
        (e.into_inner(), reason)
    })
}

fn wrap(input: InputEvent, interrupt: bool) -> Submission {
    if interrupt {
        Submission::Interrupt(input)
    } else {
        Submission::Input(input)
    }
}

fn skip_reply(reason: &str) -> Reply {
    Reply {
        skipped: true,
        reason: Some(reason.into()),
        ..Reply::default()
    }
}

/// Answers a submission that will not reach the kernel.
fn refuse(submission: Submission, reason: &str) {
    match submission {
        Submission::Input(mut i) | Submission::Interrupt(mut i) | Submission::SelfInput(mut i) => {
            i.skip(reason);
        }
        Submission::Control(_) => {}
    }
}

/// The ingress node's downstream edges.
#[derive(Debug)]
pub struct IngressOut {
    /// Queued inputs.
    pub inputs: EdgeTx<InputEvent>,
    /// Inputs the kernel gives itself.
    pub self_inputs: EdgeTx<InputEvent>,
    /// Interrupts.
    pub interrupts: EdgeTx<InputEvent>,
    /// Control requests.
    pub control: EdgeTx<Control>,
}

/// The node that admits submissions and routes them to the kernel's edges.
#[derive(Debug)]
pub struct IngressNode {
    rx: EdgeRx<Submission>,
    out: IngressOut,
    /// A submission the kernel had no room for yet (interrupts and control wait rather than fail).
    held: Option<Submission>,
    gate: Arc<IngressGate>,
    /// Where a refusal is journaled as the input's end (a durable kernel), so a refused input
    /// never runs again after a restart.
    durable: Option<Durable>,
}

impl IngressNode {
    /// An ingress reading `rx`, forwarding to `out`, closing when `gate` does.
    pub fn new(rx: EdgeRx<Submission>, out: IngressOut, gate: Arc<IngressGate>) -> Self {
        Self {
            rx,
            out,
            held: None,
            gate,
            durable: None,
        }
    }

    /// Journals every refusal through `durable`.
    pub fn with_durable(mut self, durable: Option<Durable>) -> Self {
        self.durable = durable;
        self
    }

    /// Answers an input the kernel will not get, journaled when durable.
    fn refuse_input(&self, mut input: InputEvent, reason: &str) {
        match &self.durable {
            Some(durable) => durable.reply(input.take_reply(), skip_reply(reason), Vec::new()),
            None => {
                input.skip(reason);
            }
        }
    }

    /// Sends `input` on `edge`, telling its listener once the edge holds it; gives back what
    /// the edge refused.
    fn hand_over(edge: &EdgeTx<InputEvent>, input: InputEvent) -> Option<TrySendError<InputEvent>> {
        let admission = input.admission();
        if let Err(e) = edge.try_send(input) {
            return Some(e);
        }
        if let Some(admission) = admission {
            admission.notify();
        }
        None
    }

    /// Forwards one submission. Returns it when it must wait for room.
    fn forward(&self, submission: Submission) -> Option<Submission> {
        let refuse = |e: TrySendError<InputEvent>| {
            let reason = if e.is_full() {
                skip::QUEUE_FULL
            } else {
                skip::SHUTDOWN
            };
            self.refuse_input(e.into_inner(), reason);
        };
        match submission {
            Submission::Input(i) => Self::hand_over(&self.out.inputs, i).map(refuse).and(None),
            Submission::SelfInput(i) => {
                if let Err(e) = self.out.self_inputs.try_send(i) {
                    // Self-inputs are the kernel's own bookkeeping: dropping one is logged, never blocking.
                    tracing::warn!(full = e.is_full(), "self-input dropped");
                }
                None
            }
            // Interrupts and control are few and must not be lost to a momentary full edge.
            Submission::Interrupt(i) => match Self::hand_over(&self.out.interrupts, i) {
                None => None,
                Some(e) if e.is_full() => Some(Submission::Interrupt(e.into_inner())),
                Some(e) => {
                    refuse(e);
                    None
                }
            },
            Submission::Control(c) => match self.out.control.try_send(c) {
                Ok(()) => None,
                Err(e) if e.is_full() => Some(Submission::Control(e.into_inner())),
                Err(_) => None,
            },
        }
    }
}

impl IngressNode {
    fn refuse_all(&mut self) {
        let pending = self
            .held
            .take()
            .into_iter()
            .chain(std::iter::from_fn(|| self.rx.try_recv().ok()));
        let pending: Vec<Submission> = pending.collect();
        for submission in pending {
            match submission {
                Submission::Input(i) | Submission::Interrupt(i) => {
                    self.refuse_input(i, skip::SHUTDOWN);
                }
                other => refuse(other, skip::SHUTDOWN),
            }
        }
    }
}

impl Node for IngressNode {
    fn name(&self) -> &str {
        "ingress"
    }

    fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
        if self.gate.is_closing() {
            self.refuse_all();
            // SYNC: pairs with the Acquire load in `IngressGate::is_closed`.
            self.gate.closed.store(true, Ordering::Release);
            return Poll::IDLE;
        }
        let mut progress = false;
        if let Some(held) = self.held.take() {
            self.held = self.forward(held);
            if self.held.is_some() {
                return Poll::IDLE;
            }
            progress = true;
        }
        while let Ok(submission) = self.rx.try_recv() {
            progress = true;
            if let Some(wait) = self.forward(submission) {
                self.held = Some(wait);
                break;
            }
        }
        if progress { Poll::Busy } else { Poll::IDLE }
    }

    fn shutdown(&mut self) {
        self.refuse_all();
    }
}
