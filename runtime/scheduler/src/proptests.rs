//! Random operation sequences against the scheduler, driven the way the executor drives it,
//! checked against the invariants of SPEC §2.10 and a reference model of selection (§2.4),
//! registration (§2.5) and re-arming (§2.6) computed from the snapshot before each call.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::*;

#[derive(Clone, Debug)]
enum Op {
    Enqueue {
        self_input: bool,
    },
    Interrupt(Level),
    Next,
    /// A safe point: re-arm, then yield if asked to.
    Step,
    Done,
    Critical,
    ArmStop(usize),
    ConsumeCancel,
    TakeStop,
    AdvanceMs(u64),
}

#[derive(Clone, Copy, Debug)]
enum Ending {
    /// Keep selecting and finishing until nothing is left.
    RunToIdle,
    /// Shut down: finish the running task and drain the rest.
    DrainAll,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<bool>().prop_map(|self_input| Op::Enqueue { self_input }),
        4 => prop::sample::select(Level::ALL.to_vec()).prop_map(Op::Interrupt),
        3 => Just(Op::Next),
        4 => Just(Op::Step),
        2 => Just(Op::Done),
        1 => Just(Op::Critical),
        1 => (0usize..5).prop_map(Op::ArmStop),
        1 => Just(Op::ConsumeCancel),
        1 => Just(Op::TakeStop),
        2 => (0u64..2500).prop_map(Op::AdvanceMs),
    ]
}

struct Harness {
    s: Scheduler<u64, u32>,
    max_queue: usize,
    cooldown: Duration,
    now: Instant,
    /// The task the executor holds, with its frame (the number of steps it has taken).
    current: Option<(Task<u64>, u32)>,
    next_input: u64,
    /// Every accepted task and the input it was accepted with.
    accepted: BTreeMap<TaskId, u64>,
    /// How each task ended; a second ending is a failure.
    ended: BTreeMap<TaskId, &'static str>,
    /// Frames handed to `suspend`, by task.
    saved_frames: BTreeMap<TaskId, u32>,
    executed: u64,
    rejected: u64,
}

impl Harness {
    fn new(max_queue: usize, cooldown: Duration) -> Self {
        Harness {
            s: Scheduler::new(SchedulerConfig {
                max_queue,
                cooldown,
            }),
            max_queue,
            cooldown,
            now: Instant::now(),
            current: None,
            next_input: 0,
            accepted: BTreeMap::new(),
            ended: BTreeMap::new(),
            saved_frames: BTreeMap::new(),
            executed: 0,
            rejected: 0,
        }
    }

    fn accept(&mut self, id: TaskId, input: u64) {
        assert!(
            self.accepted.keys().all(|&old| old < id),
            "ids increase: {id}"
        );
        self.accepted.insert(id, input);
    }

    fn end(&mut self, task: &Task<u64>, how: &'static str) {
        assert_eq!(
            self.accepted.get(&task.id),
            Some(&task.input),
            "task {} carries its input",
            task.id
        );
        if let Some(before) = self.ended.insert(task.id, how) {
            panic!("task {} ended twice: {before} then {how}", task.id);
        }
    }

    fn out_of_cooldown(&self, r: &RunningTask) -> bool {
        r.last_preempt_at
            .is_none_or(|at| self.now.saturating_duration_since(at) >= self.cooldown)
    }

    fn fresh_input(&mut self) -> u64 {
        self.next_input += 1;
        self.next_input
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Enqueue { self_input } => self.enqueue(self_input),
            Op::Interrupt(level) => self.interrupt(level),
            Op::Next => self.next(),
            Op::Step => self.step(),
            Op::Done => self.done(),
            Op::Critical => {
                if self.current.is_some() {
                    self.s.set_critical(true);
                }
            }
            Op::ArmStop(pending) => {
                let expected = self.s.cancel_budget().max(self.s.ready_len() + pending);
                assert_eq!(self.s.arm_stop(pending), expected);
                assert!(self.s.stop_armed());
            }
            Op::ConsumeCancel => {
                let before = self.s.cancel_budget();
                assert_eq!(self.s.consume_cancel(), before > 0);
                assert_eq!(self.s.cancel_budget(), before.saturating_sub(1));
            }
            Op::TakeStop => {
                let armed = self.s.stop_armed();
                assert_eq!(self.s.take_stop(), armed);
                assert!(!self.s.stop_armed());
            }
            Op::AdvanceMs(ms) => self.now += Duration::from_millis(ms),
        }
        self.check_invariants();
    }

    fn enqueue(&mut self, self_input: bool) {
        let input = self.fresh_input();
        let kind = if self_input {
            TaskKind::SelfInput
        } else {
            TaskKind::Input
        };
        let full = self.s.ready_len() >= self.max_queue;
        match self.s.enqueue(input, kind, self.now) {
            Ok(id) => {
                assert!(!full, "accepted beyond the bound");
                self.accept(id, input);
            }
            Err(back) => {
                assert!(full, "refused with room left");
                assert_eq!(back.into_inner(), input, "the input is handed back");
                self.rejected += 1;
            }
        }
    }

    fn interrupt(&mut self, level: Level) {
        let snap = self.s.snapshot();
        let running = self.s.running();
        let expect_preempt = !snap.critical
            && running
                .is_some_and(|r| level.as_u8() > r.effective_level && self.out_of_cooldown(&r))
            && snap
                .immediate
                .as_ref()
                .is_none_or(|i| i.effective_level < level.as_u8());
        let expect_drop = (snap.pending_interrupts >= self.max_queue)
            .then(|| {
                snap.interrupt_queues
                    .iter()
                    .find_map(|q| q.tasks.first().map(|t| t.id))
            })
            .flatten();

        let input = self.fresh_input();
        let reg = self.s.register_interrupt(input, level, self.now);
        assert_eq!(reg.preempted(), expect_preempt, "registration outcome");
        self.accept(reg.id(), input);
        if reg.preempted() {
            assert_eq!(self.s.preempt_level(), Some(level));
        }

        // Starvation guard: a task preempted twice sits at least two levels up, so interrupts
        // at or below that level cannot take the processor from it.
        if let Some(r) = running.filter(|r| r.class == TaskClass::Interrupt && r.preempt_count >= 2)
        {
            assert!(r.effective_level >= (r.level.as_u8() + 2).min(4));
            if level.as_u8() <= r.effective_level {
                assert!(!reg.preempted(), "a promoted task was preempted");
            }
        }

        let dropped = reg.into_dropped();
        assert_eq!(
            dropped.as_ref().map(|t| t.id),
            expect_drop,
            "overflow victim"
        );
        if let Some(t) = dropped {
            self.rejected += 1;
            self.end(&t, "dropped");
        }
    }

    /// §2.4 evaluated on the snapshot: (id, is a resume).
    fn expected_selection(snap: &SchedulerSnapshot) -> Option<(TaskId, bool)> {
        if let Some(i) = &snap.immediate {
            return Some((i.id, false));
        }
        let head = snap
            .interrupt_queues
            .iter()
            .rev()
            .find_map(|q| q.tasks.first().map(|t| (t.id, q.level)));
        if let Some(top) = snap.stack.last()
            && head.is_none_or(|(_, level)| top.effective_level >= level)
        {
            return Some((top.id, true));
        }
        head.map(|(id, _)| (id, false))
            .or_else(|| snap.queue.first().map(|t| (t.id, false)))
    }

    fn next(&mut self) {
        if self.current.is_some() {
            assert!(self.s.next(self.now).is_none(), "second running task");
            return;
        }
        let expected = Self::expected_selection(&self.s.snapshot());
        let resumed_before = self.s.stats().resumed;
        let picked = self.s.next(self.now);
        let got = picked
            .as_ref()
            .map(|n| (n.task().id, matches!(n, Next::Resume(..))));
        assert_eq!(got, expected, "selection order");
        match picked {
            None => {}
            Some(Next::New(t)) => {
                assert_eq!(t.preempt_count, 0);
                assert_eq!(self.s.stats().resumed, resumed_before);
                self.current = Some((t, 0));
            }
            Some(Next::Resume(t, frame)) => {
                assert_eq!(
                    self.saved_frames.remove(&t.id),
                    Some(frame),
                    "its own frame"
                );
                assert_eq!(self.s.stats().resumed, resumed_before + 1);
                assert!(t.preempt_count >= 1);
                if t.class == TaskClass::Interrupt && t.preempt_count >= 2 {
                    assert!(t.effective_level() >= (t.level.as_u8() + 2).min(4));
                }
                self.current = Some((t, frame));
            }
        }
        if let Some((t, _)) = &self.current {
            let r = self.s.running().expect("marked running");
            assert_eq!(
                (r.id, r.effective_level, r.started),
                (t.id, t.effective_level(), self.now)
            );
        }
    }

    fn step(&mut self) {
        let Some((task, frame)) = self.current.take() else {
            assert!(
                !self.s.rearm_pending(self.now),
                "armed with nothing running"
            );
            return;
        };
        let snap = self.s.snapshot();
        let r = self.s.running().expect("running");
        let expect_rearm = (snap.preempt_level.is_none()
            && snap.immediate.is_none()
            && !snap.critical
            && self.out_of_cooldown(&r))
        .then(|| {
            snap.interrupt_queues
                .iter()
                .rev()
                .filter(|q| q.level > r.effective_level)
                .find_map(|q| q.tasks.first().map(|t| t.id))
        })
        .flatten();
        let armed = self.s.rearm_pending(self.now);
        assert_eq!(armed, expect_rearm.is_some(), "rearm outcome");
        if armed {
            assert_eq!(self.s.snapshot().immediate.map(|t| t.id), expect_rearm);
        }

        let granted = !self.s.is_critical()
            && self
                .s
                .preempt_level()
                .is_some_and(|l| l.as_u8() > r.effective_level);
        // Structural bound: a granted preemption never meets a full stack.
        if granted {
            assert!(self.s.stack_depth() < MAX_INTERRUPT_FRAMES);
        }
        assert_eq!(self.s.should_suspend(), granted);
        let frame = frame + 1;
        if granted {
            self.saved_frames.insert(task.id, frame);
            let suspended_before = self.s.stats().suspended;
            self.s.suspend(task, frame, self.now);
            assert_eq!(self.s.stats().suspended, suspended_before + 1);
            assert_eq!(self.s.running(), None);
            assert_eq!(self.s.preempt_level(), None);
        } else {
            self.current = Some((task, frame));
        }
    }

    fn done(&mut self) {
        if let Some((task, _)) = self.current.take() {
            self.s.done(task.id);
            self.executed += 1;
            self.end(&task, "done");
            assert_eq!(self.s.preempt_level(), None);
        }
    }

    fn check_invariants(&self) {
        assert_eq!(
            self.s.running().map(|r| r.id),
            self.current.as_ref().map(|(t, _)| t.id),
            "I1: the scheduler's running task is the executor's"
        );
        assert!(self.s.stack_depth() <= MAX_INTERRUPT_FRAMES);
        assert!(self.s.ready_len() <= self.max_queue);
        assert!(self.s.pending_interrupts() <= self.max_queue);
        assert!(!self.s.is_critical() || self.current.is_some());
        let st = self.s.stats();
        assert_eq!(st.enqueued, self.accepted.len() as u64);
        assert_eq!(st.executed, self.executed);
        assert_eq!(st.rejected, self.rejected);
        assert_eq!(st.interrupts_by_level[0], 0);
        assert_eq!(st.preempts_by_level[0], 0);
    }

    fn finish(mut self, ending: Ending) {
        match ending {
            Ending::RunToIdle => {
                let bound = 2 * self.accepted.len() + 2;
                for _ in 0..bound {
                    if self.current.is_some() {
                        self.done();
                    } else {
                        self.next();
                        if self.current.is_none() {
                            break;
                        }
                    }
                    self.check_invariants();
                }
                assert!(self.s.is_idle(), "drained in {bound} selections");
                let st = self.s.stats();
                assert_eq!(st.suspended, st.resumed, "every suspension resumed");
            }
            Ending::DrainAll => {
                self.done();
                let suspended_left = self.s.stack_depth() as u64;
                for d in self.s.drain_all() {
                    let (task, frame) = d.into_parts();
                    assert_eq!(frame, self.saved_frames.remove(&task.id));
                    self.end(&task, "drained");
                }
                assert!(self.s.is_idle());
                let st = self.s.stats();
                assert_eq!(st.suspended, st.resumed + suspended_left);
            }
        }
        assert!(self.saved_frames.is_empty(), "frames left behind");
        let lost: Vec<TaskId> = self
            .accepted
            .keys()
            .filter(|id| !self.ended.contains_key(id))
            .copied()
            .collect();
        assert!(lost.is_empty(), "tasks without an ending: {lost:?}");
        assert_eq!(self.ended.len(), self.accepted.len());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_schedules_keep_every_invariant(
        max_queue in 2usize..=6,
        cooldown_ms in prop::sample::select(vec![0u64, 700, PREEMPT_COOLDOWN.as_millis() as u64]),
        ops in prop::collection::vec(op(), 1..160),
        drain in any::<bool>(),
    ) {
        let mut h = Harness::new(max_queue, Duration::from_millis(cooldown_ms));
        for op in &ops {
            h.apply(op);
        }
        h.finish(if drain { Ending::DrainAll } else { Ending::RunToIdle });
    }
}
