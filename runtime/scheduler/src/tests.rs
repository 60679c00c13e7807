//! One test per scheduling rule (SPEC §2.1–§2.8). Each drives the public API the way the
//! executor does and would fail if its rule were broken.

use std::time::{Duration, Instant};

use super::*;

type S = Scheduler<&'static str, u32>;

fn sched() -> S {
    Scheduler::new(SchedulerConfig::default())
}

fn sched_with_max(max_queue: usize) -> S {
    Scheduler::new(SchedulerConfig {
        max_queue,
        ..SchedulerConfig::default()
    })
}

fn start_new(s: &mut S, now: Instant) -> Task<&'static str> {
    match s.next(now) {
        Some(Next::New(t)) => t,
        other => panic!("expected a new task, got {other:?}"),
    }
}

fn start_resume(s: &mut S, now: Instant) -> (Task<&'static str>, u32) {
    match s.next(now) {
        Some(Next::Resume(t, f)) => (t, f),
        other => panic!("expected a resumed task, got {other:?}"),
    }
}

fn preempted(r: &Registered<&'static str>) -> bool {
    matches!(r, Registered::Preempted { dropped: None, .. })
}

fn queued(r: &Registered<&'static str>) -> bool {
    matches!(r, Registered::Queued { dropped: None, .. })
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Runs a queued input `name` so it becomes the running task.
fn run_queued(s: &mut S, name: &'static str, now: Instant) -> Task<&'static str> {
    s.enqueue(name, TaskKind::Input, now).expect("room");
    start_new(s, now)
}

/// Registers an interrupt while nothing runs and starts it.
fn run_interrupt(s: &mut S, name: &'static str, level: Level, now: Instant) -> Task<&'static str> {
    assert!(queued(&s.register_interrupt(name, level, now)));
    start_new(s, now)
}

// §2.1 levels ---------------------------------------------------------------------------------

#[test]
fn default_level_is_l1_for_undeclared_or_invalid_priority() {
    assert_eq!(DEFAULT_LEVEL, Level::L1);
    assert_eq!(Level::from_payload(None), DEFAULT_LEVEL);
    for bad in ["", "L0", "L5", "high", "L 3", "3", " L3", "L3 ", "Ｌ3"] {
        assert_eq!(Level::from_payload(Some(bad)), DEFAULT_LEVEL, "{bad:?}");
    }
    assert_eq!(Level::from_payload(Some("L3")), Level::L3);
    assert_eq!(Level::from_payload(Some("l4")), Level::L4);
}

#[test]
fn parse_priority_accepts_only_exact_spellings() {
    for (s, l) in [
        ("L1", Level::L1),
        ("L2", Level::L2),
        ("L3", Level::L3),
        ("L4", Level::L4),
        ("l1", Level::L1),
        ("l2", Level::L2),
        ("l3", Level::L3),
        ("l4", Level::L4),
    ] {
        assert_eq!(parse_priority(s), Some(l), "{s}");
    }
    for bad in [
        "",
        "L",
        "L0",
        "L5",
        "1",
        "4",
        "L1-background",
        "critical",
        " l2",
        "L2\n",
    ] {
        assert_eq!(parse_priority(bad), None, "{bad:?}");
    }
}

#[test]
fn level_names_are_stable_and_unknown_values_are_marked() {
    let names: Vec<&str> = Level::ALL.iter().map(|l| l.as_str()).collect();
    assert_eq!(
        names,
        [
            "L1-background",
            "L2-message",
            "L3-interactive",
            "L4-critical"
        ]
    );
    for l in Level::ALL {
        assert_eq!(level_name(l.as_u8()), l.as_str());
        assert_eq!(Level::from_u8(l.as_u8()), Some(l));
        assert_eq!(l.to_string(), l.as_str());
    }
    assert_eq!(level_name(0), "L?-unknown");
    assert_eq!(level_name(5), "L?-unknown");
    assert_eq!(Level::from_u8(0), None);
}

#[test]
fn clamp_plugin_level_caps_l4_at_l3_and_keeps_the_rest() {
    assert_eq!(clamp_plugin_level(Level::L4), Level::L3);
    for l in [Level::L1, Level::L2, Level::L3] {
        assert_eq!(clamp_plugin_level(l), l);
    }
}

// §2.2 effective level and preemption -------------------------------------------------------

#[test]
fn effective_level_is_zero_for_queued_and_promotion_is_capped() {
    for pc in 0..6 {
        assert_eq!(effective_level(TaskClass::Queued, Level::L4, pc), 0);
    }
    let l1: Vec<u8> = (0..6)
        .map(|pc| effective_level(TaskClass::Interrupt, Level::L1, pc))
        .collect();
    assert_eq!(
        l1,
        [1, 2, 3, 3, 3, 3],
        "promotion stops after PREEMPT_PROMOTION_CAP = {PREEMPT_PROMOTION_CAP}"
    );
    assert_eq!(effective_level(TaskClass::Interrupt, Level::L2, 2), 4);
    assert_eq!(
        effective_level(TaskClass::Interrupt, Level::L3, 2),
        4,
        "never above L4"
    );
    assert_eq!(effective_level(TaskClass::Interrupt, Level::L4, 9), 4);
}

#[test]
fn any_interrupt_preempts_a_queued_task() {
    let now = Instant::now();
    let mut s = sched();
    run_queued(&mut s, "q", now);
    assert!(!s.should_suspend());
    assert!(preempted(&s.register_interrupt("i", Level::L1, now)));
    assert_eq!(s.preempt_level(), Some(Level::L1));
    assert!(s.should_suspend());
}

#[test]
fn preemption_requires_a_strictly_greater_level() {
    let now = Instant::now();
    let mut s = sched();
    run_interrupt(&mut s, "a", Level::L2, now);
    assert!(queued(&s.register_interrupt("same", Level::L2, now)));
    assert!(queued(&s.register_interrupt("lower", Level::L1, now)));
    assert!(!s.should_suspend());
    assert!(
        !s.rearm_pending(now),
        "equal or lower levels never arm later either"
    );
    assert!(preempted(&s.register_interrupt("higher", Level::L3, now)));
    assert!(s.should_suspend());
}

#[test]
fn preemption_compares_with_the_running_tasks_effective_level() {
    let t0 = Instant::now();
    let mut s = sched();
    let a = run_interrupt(&mut s, "a", Level::L1, t0);
    assert!(preempted(&s.register_interrupt("b", Level::L2, t0)));
    s.suspend(a, 1, t0);
    let b = start_new(&mut s, t0);
    s.done(b.id);
    let (a, _) = start_resume(&mut s, t0);
    assert_eq!(s.running().map(|r| r.effective_level), Some(2));
    let later = t0 + PREEMPT_COOLDOWN;
    assert!(
        queued(&s.register_interrupt("c", Level::L2, later)),
        "L2 does not beat a promoted L1"
    );
    assert!(preempted(&s.register_interrupt("d", Level::L3, later)));
    assert_eq!(a.effective_level(), 2);
}

#[test]
fn queued_inputs_never_preempt_and_idle_interrupts_only_queue() {
    let now = Instant::now();
    let mut s = sched();
    assert!(
        queued(&s.register_interrupt("idle", Level::L4, now)),
        "nothing to preempt"
    );
    assert_eq!(s.preempt_level(), None);
    let i = start_new(&mut s, now);
    s.done(i.id);
    run_queued(&mut s, "q1", now);
    s.enqueue("q2", TaskKind::Input, now).expect("room");
    s.enqueue("q3", TaskKind::SelfInput, now).expect("room");
    assert!(!s.rearm_pending(now));
    assert!(!s.should_suspend());
    assert_eq!(s.preempt_level(), None);
}

// §2.2 cooldown and §2.6 rearm -----------------------------------------------------------------

#[test]
fn cooldown_blocks_preemption_and_rearm_picks_the_interrupt_up_after_it() {
    let t0 = Instant::now();
    let mut s = sched();
    let q = run_queued(&mut s, "q", t0);
    assert!(preempted(&s.register_interrupt("a", Level::L1, t0)));
    s.suspend(q, 7, t0);
    let a = start_new(&mut s, t0);
    s.done(a.id);
    let (q, frame) = start_resume(&mut s, t0 + ms(100));
    assert_eq!(frame, 7);
    assert_eq!(q.last_preempt_at, Some(t0));

    let b = s.register_interrupt("b", Level::L2, t0 + ms(1000));
    assert!(
        queued(&b),
        "inside the cooldown the interrupt is only queued"
    );
    assert!(!s.should_suspend());
    assert!(!s.rearm_pending(t0 + PREEMPT_COOLDOWN - ms(1)));
    assert!(!s.should_suspend());

    assert!(
        s.rearm_pending(t0 + PREEMPT_COOLDOWN),
        "re-evaluated once the cooldown is over"
    );
    assert_eq!(s.preempt_level(), Some(Level::L2));
    assert_eq!(s.stats().preempts_by_level[2], 1);
    assert!(s.should_suspend());
    s.suspend(q, 8, t0 + PREEMPT_COOLDOWN);
    assert_eq!(start_new(&mut s, t0 + PREEMPT_COOLDOWN).id, b.id());
}

#[test]
fn cooldown_is_configurable() {
    let t0 = Instant::now();
    let mut s: S = Scheduler::new(SchedulerConfig {
        cooldown: Duration::ZERO,
        ..SchedulerConfig::default()
    });
    let q = run_queued(&mut s, "q", t0);
    assert!(preempted(&s.register_interrupt("a", Level::L1, t0)));
    s.suspend(q, 0, t0);
    let a = start_new(&mut s, t0);
    s.done(a.id);
    start_resume(&mut s, t0);
    assert!(preempted(&s.register_interrupt("b", Level::L1, t0)));
}

#[test]
fn rearm_pending_does_nothing_when_armed_slotted_idle_or_critical() {
    let now = Instant::now();
    let mut s = sched();
    assert!(queued(&s.register_interrupt("idle", Level::L3, now)));
    assert!(!s.rearm_pending(now), "nothing running");
    let i = start_new(&mut s, now);
    s.done(i.id);

    run_queued(&mut s, "q", now);
    assert!(preempted(&s.register_interrupt("a", Level::L1, now)));
    s.set_critical(true);
    assert!(queued(&s.register_interrupt("b", Level::L4, now)));
    s.set_critical(false);
    assert!(
        !s.rearm_pending(now),
        "already armed and the immediate slot is taken"
    );
    assert_eq!(s.snapshot().interrupt_queues[3].tasks.len(), 1);
}

#[test]
fn rearm_pending_takes_the_highest_head_that_can_preempt() {
    let now = Instant::now();
    let mut s = sched();
    run_interrupt(&mut s, "running", Level::L2, now);
    s.set_critical(true);
    let l1 = s.register_interrupt("l1", Level::L1, now).id();
    let l2 = s.register_interrupt("l2", Level::L2, now).id();
    s.set_critical(false);
    assert!(!s.rearm_pending(now), "no head is above L2");
    s.set_critical(true);
    let l3 = s.register_interrupt("l3", Level::L3, now).id();
    let l4 = s.register_interrupt("l4", Level::L4, now).id();
    assert!(!s.rearm_pending(now), "critical");
    s.set_critical(false);
    assert!(s.rearm_pending(now));
    assert_eq!(s.preempt_level(), Some(Level::L4));
    assert_eq!(s.stats().preempts_by_level, [0, 0, 0, 0, 1]);
    let snap = s.snapshot();
    assert_eq!(snap.immediate.map(|t| t.id), Some(l4));
    let heads: Vec<Vec<TaskId>> = snap
        .interrupt_queues
        .iter()
        .map(|q| q.tasks.iter().map(|t| t.id).collect())
        .collect();
    assert_eq!(heads, [vec![l1], vec![l2], vec![l3], vec![]]);
    assert!(!s.rearm_pending(now), "already armed");
}

// §2.5 immediate slot -------------------------------------------------------------------------

#[test]
fn immediate_slot_keeps_an_occupant_of_equal_or_higher_level() {
    let now = Instant::now();
    let mut s = sched();
    run_queued(&mut s, "q", now);
    let a = s.register_interrupt("a", Level::L2, now);
    assert!(preempted(&a));
    let b = s.register_interrupt("b", Level::L2, now);
    assert!(queued(&b), "equal level does not displace the occupant");
    let c = s.register_interrupt("c", Level::L1, now);
    assert!(queued(&c));
    let snap = s.snapshot();
    assert_eq!(snap.immediate.map(|t| t.id), Some(a.id()));
    assert_eq!(snap.interrupt_queues[1].tasks[0].id, b.id());
    assert_eq!(snap.interrupt_queues[0].tasks[0].id, c.id());
    assert_eq!(s.stats().preempts_by_level, [0, 0, 1, 0, 0]);
}

#[test]
fn immediate_slot_demotes_a_lower_occupant_and_keeps_its_id() {
    let now = Instant::now();
    let mut s = sched();
    let q = run_queued(&mut s, "q", now);
    let a = s.register_interrupt("a", Level::L2, now);
    let b = s.register_interrupt("b", Level::L3, now);
    assert!(preempted(&a) && preempted(&b));
    assert_eq!(s.preempt_level(), Some(Level::L3));
    let snap = s.snapshot();
    assert_eq!(snap.immediate.map(|t| t.id), Some(b.id()));
    assert_eq!(snap.interrupt_queues[1].tasks.len(), 1);
    assert_eq!(snap.interrupt_queues[1].tasks[0].id, a.id(), "id is stable");
    assert_eq!(s.stats().enqueued, 3, "a demotion is not a new task");
    assert_eq!(s.stats().preempts_by_level, [0, 0, 1, 1, 0]);

    s.suspend(q, 0, now);
    let first = start_new(&mut s, now);
    assert_eq!((first.id, first.input), (b.id(), "b"));
    s.done(first.id);
    let second = start_new(&mut s, now);
    assert_eq!((second.id, second.input), (a.id(), "a"));
}

// §2.4 selection --------------------------------------------------------------------------------

#[test]
fn selection_takes_the_immediate_slot_before_any_queue() {
    let now = Instant::now();
    let mut s = sched();
    let q = run_queued(&mut s, "q", now);
    let a = s.register_interrupt("a", Level::L1, now).id();
    s.set_critical(true);
    let l4 = s.register_interrupt("l4", Level::L4, now).id();
    s.done(q.id);
    assert!(!s.is_critical(), "critical ends with the task's run");
    assert_eq!(start_new(&mut s, now).id, a);
    s.done(a);
    assert_eq!(start_new(&mut s, now).id, l4);
}

#[test]
fn selection_scans_levels_high_to_low_fifo_within_a_level_then_the_ready_queue() {
    let now = Instant::now();
    let mut s = sched();
    let r1 = s.enqueue("r1", TaskKind::Input, now).expect("room");
    let a = s.register_interrupt("a", Level::L1, now).id();
    let b = s.register_interrupt("b", Level::L3, now).id();
    let r2 = s.enqueue("r2", TaskKind::SelfInput, now).expect("room");
    let c = s.register_interrupt("c", Level::L1, now).id();
    let d = s.register_interrupt("d", Level::L3, now).id();
    let e = s.register_interrupt("e", Level::L2, now).id();
    let mut order = Vec::new();
    while let Some(n) = s.next(now) {
        let id = n.task().id;
        order.push(id);
        s.done(id);
    }
    assert_eq!(order, [b, d, e, a, c, r1, r2]);
}

/// Builds a suspended L2 task promoted once (effective 3) and a waiting interrupt `c` at
/// `queued_level`. Returns (promoted task id, c's id).
fn promoted_l2_vs_queued(s: &mut S, now: Instant, queued_level: Level) -> (TaskId, TaskId) {
    let a = run_interrupt(s, "a", Level::L2, now);
    assert!(preempted(&s.register_interrupt("b", Level::L3, now)));
    s.suspend(a, 1, now);
    let b = start_new(s, now);
    s.done(b.id);
    // Nothing runs, so `c` can only be queued.
    let c = s.register_interrupt("c", queued_level, now).id();
    (s.snapshot().stack[0].id, c)
}

#[test]
fn selection_tie_between_stack_top_and_queue_head_goes_to_the_stack() {
    let now = Instant::now();
    let mut s = sched();
    let (a, c) = promoted_l2_vs_queued(&mut s, now, Level::L3);
    let (top, _) = start_resume(&mut s, now);
    assert_eq!((top.id, top.effective_level()), (a, 3));
    s.done(a);
    assert_eq!(start_new(&mut s, now).id, c);
}

#[test]
fn selection_compares_stack_top_effective_level_with_queue_base_level() {
    let now = Instant::now();
    // Effective 3 beats a queued L2 although its base level is L2 ... and loses to an L4.
    let mut s = sched();
    let (a, c) = promoted_l2_vs_queued(&mut s, now, Level::L4);
    assert_eq!(start_new(&mut s, now).id, c);
    s.done(c);
    assert_eq!(start_resume(&mut s, now).0.id, a);

    // A twice-preempted L1 (effective 3) resumes before a queued L2 (base 2 < 3), which a
    // base-level comparison (1 < 2) would get wrong.
    let t0 = Instant::now();
    let mut s = sched();
    let a = run_interrupt(&mut s, "a", Level::L1, t0);
    assert!(preempted(&s.register_interrupt("b", Level::L2, t0)));
    s.suspend(a, 1, t0);
    let b = start_new(&mut s, t0);
    s.done(b.id);
    let (a, _) = start_resume(&mut s, t0);
    let t1 = t0 + PREEMPT_COOLDOWN;
    assert!(preempted(&s.register_interrupt("c", Level::L3, t1)));
    s.suspend(a, 2, t1);
    let c = start_new(&mut s, t1);
    let d = s.register_interrupt("d", Level::L2, t1).id();
    s.done(c.id);
    let (a, frame) = start_resume(&mut s, t1);
    assert_eq!((a.preempt_count, a.effective_level(), frame), (2, 3, 2));
    s.done(a.id);
    assert_eq!(start_new(&mut s, t1).id, d);
}

#[test]
fn suspend_stack_is_lifo_and_only_its_top_is_compared() {
    let now = Instant::now();
    let mut s = sched();
    let q = run_queued(&mut s, "q", now);
    assert!(preempted(&s.register_interrupt("a", Level::L1, now)));
    s.suspend(q, 10, now);
    let a = start_new(&mut s, now);
    assert!(preempted(&s.register_interrupt("b", Level::L2, now)));
    s.suspend(a, 20, now);
    let b = start_new(&mut s, now);
    let c = s.register_interrupt("c", Level::L1, now).id();
    s.done(b.id);
    assert_eq!(s.stack_depth(), 2);
    let order: Vec<u64> = s.snapshot().stack.iter().map(|t| t.id).collect();
    assert_eq!(order, [1, 2], "bottom first");

    let (top, frame) = start_resume(&mut s, now);
    assert_eq!(
        (top.input, frame),
        ("a", 20),
        "last suspended resumes first"
    );
    s.done(top.id);
    // The queued task at the bottom (effective 0) now loses to the L1 head.
    assert_eq!(start_new(&mut s, now).id, c);
    s.done(c);
    let (bottom, frame) = start_resume(&mut s, now);
    assert_eq!((bottom.input, frame), ("q", 10));
    s.done(bottom.id);
    assert_eq!(s.stats().suspended, s.stats().resumed);
}

#[test]
fn next_returns_nothing_while_a_task_runs() {
    let now = Instant::now();
    let mut s = sched();
    let q = run_queued(&mut s, "q", now);
    s.enqueue("waiting", TaskKind::Input, now).expect("room");
    assert!(s.next(now).is_none(), "at most one running task");
    assert_eq!(s.running().map(|r| r.id), Some(q.id));
    s.done(q.id);
    assert_eq!(start_new(&mut s, now).input, "waiting");
}

#[test]
fn running_reports_the_selected_task() {
    let now = Instant::now();
    let mut s = sched();
    assert_eq!(s.running(), None);
    let later = now + ms(5);
    s.register_interrupt("x", Level::L3, now);
    let t = start_new(&mut s, later);
    let r = s.running().expect("running");
    assert_eq!(
        (r.id, r.class, r.level, r.kind, r.effective_level, r.started),
        (
            t.id,
            TaskClass::Interrupt,
            Level::L3,
            TaskKind::Input,
            3,
            later
        )
    );
    assert!(!s.should_suspend() && !s.is_idle());
    s.done(t.id);
    assert!(s.is_idle());
}

// §2.6 suspend depth and critical channel -----------------------------------------------------

#[test]
fn natural_chain_reaches_exactly_the_structural_depth() {
    let now = Instant::now();
    let mut s = sched();
    let mut running = run_queued(&mut s, "q", now);
    for level in [Level::L1, Level::L2, Level::L3, Level::L4] {
        assert!(preempted(&s.register_interrupt("i", level, now)));
        assert!(s.should_suspend());
        s.suspend(running, 0, now);
        running = start_new(&mut s, now);
    }
    assert_eq!(s.stack_depth(), MAX_INTERRUPT_FRAMES);
    assert!(queued(&s.register_interrupt("l4 again", Level::L4, now)));
    assert!(!s.should_suspend());
    assert_eq!(s.stats().rejected, 0);
}

fn foreign_task(id: TaskId, now: Instant) -> Task<&'static str> {
    Task {
        id,
        class: TaskClass::Interrupt,
        level: Level::L1,
        kind: TaskKind::Input,
        preempt_count: 0,
        last_preempt_at: None,
        enqueued_at: now,
        input: "foreign",
    }
}

#[test]
fn should_suspend_refuses_at_max_depth_and_suspend_never_drops_a_frame() {
    let now = Instant::now();
    let mut s = sched();
    let q = run_queued(&mut s, "q", now);
    // Only a misbehaving executor can reach the bound; force it with frames of other tasks.
    for i in 0..MAX_INTERRUPT_FRAMES {
        s.suspend(foreign_task(1000 + i as u64, now), i as u32, now);
    }
    assert_eq!(s.running().map(|r| r.id), Some(q.id));
    assert_eq!(s.stats().rejected, 0);
    assert!(preempted(&s.register_interrupt("a", Level::L2, now)));
    assert!(!s.should_suspend(), "no room below the structural depth");

    s.suspend(q, 99, now);
    assert_eq!(s.stack_depth(), MAX_INTERRUPT_FRAMES + 1, "frame kept");
    assert_eq!(s.stats().rejected, 1, "counted defensively");
    let frames: Vec<Option<u32>> = s
        .drain_all()
        .into_iter()
        .filter_map(|d| match d {
            Drained::Suspended(_, f) => Some(Some(f)),
            Drained::Pending(_) => None,
        })
        .collect();
    assert_eq!(frames, [Some(99), Some(3), Some(2), Some(1), Some(0)]);
}

#[test]
fn critical_section_only_queues_interrupts_and_never_yields() {
    assert_eq!(CRITICAL_CHANNEL, "_consolidation_");
    let now = Instant::now();
    let mut s = sched();
    let q = run_queued(&mut s, "consolidation", now);
    s.set_critical(true);
    assert!(s.is_critical());
    assert!(queued(&s.register_interrupt("stop", Level::L4, now)));
    assert_eq!(s.preempt_level(), None, "neither arms ...");
    assert_eq!(s.stats().preempted(), 0, "... nor counts a preemption");
    assert!(!s.rearm_pending(now));
    assert!(!s.should_suspend());
    s.set_critical(false);
    assert!(s.rearm_pending(now));
    assert!(s.should_suspend());
    s.set_critical(true);
    assert!(
        !s.should_suspend(),
        "an armed preemption waits for the section"
    );
    s.suspend(q, 0, now);
    assert!(!s.is_critical(), "suspend ends the run");
}

// §2.3 and §2.5 bounds ------------------------------------------------------------------------

#[test]
fn ready_queue_is_bounded_and_hands_the_input_back() {
    let now = Instant::now();
    let mut s: Scheduler<usize, ()> = Scheduler::new(SchedulerConfig::default());
    assert_eq!(s.max_queue(), DEFAULT_MAX_QUEUE);
    for i in 0..DEFAULT_MAX_QUEUE {
        assert_eq!(s.enqueue(i, TaskKind::Input, now).ok(), Some(i as u64 + 1));
    }
    assert!(!s.has_room());
    let full = s
        .enqueue(usize::MAX, TaskKind::Input, now)
        .expect_err("queue is full");
    assert_eq!(full.into_inner(), usize::MAX);
    assert_eq!(s.ready_len(), DEFAULT_MAX_QUEUE);
    assert_eq!(
        (s.stats().enqueued, s.stats().rejected),
        (DEFAULT_MAX_QUEUE as u64, 1)
    );
    let next = s.next(now).expect("head");
    assert_eq!(next.task().input, 0);
    assert!(s.enqueue(7, TaskKind::Input, now).is_ok(), "room again");

    let zero: Scheduler<usize, ()> = Scheduler::new(SchedulerConfig {
        max_queue: 0,
        ..SchedulerConfig::default()
    });
    assert_eq!(zero.max_queue(), DEFAULT_MAX_QUEUE);
}

#[test]
fn interrupt_overflow_evicts_the_oldest_of_the_lowest_level() {
    let now = Instant::now();
    let mut s = sched_with_max(4);
    let a = s.register_interrupt("a", Level::L2, now).id();
    let b = s.register_interrupt("b", Level::L1, now).id();
    let c = s.register_interrupt("c", Level::L1, now).id();
    let _d = s.register_interrupt("d", Level::L3, now).id();
    assert_eq!(s.stats().rejected, 0);
    let drop_of = |r: Registered<&'static str>| r.into_dropped().map(|t| (t.id, t.input));
    assert_eq!(
        drop_of(s.register_interrupt("e", Level::L4, now)),
        Some((b, "b"))
    );
    assert_eq!(
        drop_of(s.register_interrupt("f", Level::L4, now)),
        Some((c, "c"))
    );
    assert_eq!(
        drop_of(s.register_interrupt("g", Level::L1, now)),
        Some((a, "a"))
    );
    assert_eq!(s.pending_interrupts(), 4);
    assert_eq!(s.stats().rejected, 3);
    assert_eq!(s.stats().interrupts_by_level, [0, 3, 1, 1, 2]);
}

#[test]
fn interrupt_overflow_counts_the_immediate_slot_and_applies_when_preempting() {
    let now = Instant::now();
    let mut s = sched_with_max(2);
    run_queued(&mut s, "q", now);
    let a = s.register_interrupt("a", Level::L1, now);
    assert!(preempted(&a));
    let b = s.register_interrupt("b", Level::L1, now);
    assert!(queued(&b));
    let c = s.register_interrupt("c", Level::L1, now);
    assert!(matches!(&c, Registered::Queued { dropped: Some(t), .. } if t.id == b.id()));
    let d = s.register_interrupt("d", Level::L2, now);
    assert!(matches!(&d, Registered::Preempted { dropped: Some(t), .. } if t.id == c.id()));
    let snap = s.snapshot();
    assert_eq!(snap.immediate.map(|t| t.id), Some(d.id()));
    assert_eq!(snap.interrupt_queues[0].tasks[0].id, a.id());
    assert_eq!(s.pending_interrupts(), 2);
}

// §2.8 stop -----------------------------------------------------------------------------------

#[test]
fn arm_stop_budget_is_ready_queue_plus_pending_inputs() {
    let now = Instant::now();
    let mut s = sched();
    run_queued(&mut s, "running", now);
    for name in ["a", "b", "c"] {
        s.enqueue(name, TaskKind::Input, now).expect("room");
    }
    assert_eq!(s.arm_stop(2), 5);
    assert_eq!(s.cancel_budget(), 5);
    assert!(s.stop_armed());
}

#[test]
fn repeated_stops_take_the_max_not_the_sum() {
    let mut s = sched();
    assert_eq!(s.arm_stop(4), 4);
    assert_eq!(s.arm_stop(3), 4, "a smaller count keeps the budget");
    assert_eq!(s.arm_stop(4), 4, "an equal count does not add");
    assert_eq!(s.arm_stop(6), 6);
}

#[test]
fn consume_cancel_spends_the_budget_down_to_zero() {
    let mut s = sched();
    assert!(!s.consume_cancel());
    s.arm_stop(2);
    assert!(s.consume_cancel());
    assert!(s.consume_cancel());
    assert!(!s.consume_cancel());
    assert_eq!(s.cancel_budget(), 0);
    assert!(
        s.stop_armed(),
        "the budget and the stop flag are independent"
    );
}

#[test]
fn take_stop_consumes_the_armed_flag_once() {
    let mut s = sched();
    assert!(!s.take_stop());
    s.arm_stop(0);
    assert_eq!(s.cancel_budget(), 0);
    assert!(s.take_stop());
    assert!(!s.take_stop());
    assert!(!s.stop_armed());
}

// §2.7 stats, backpressure, snapshot, drain -----------------------------------------------------

#[test]
fn stats_count_every_transition() {
    let now = Instant::now();
    let mut s = sched();
    let q = run_queued(&mut s, "q", now);
    assert!(preempted(&s.register_interrupt("a", Level::L1, now)));
    s.suspend(q, 0, now);
    let a = start_new(&mut s, now);
    assert!(queued(&s.register_interrupt("b", Level::L1, now)));
    s.done(a.id);
    let b = start_new(&mut s, now);
    s.done(b.id);
    let (q, _) = start_resume(&mut s, now);
    s.done(q.id);
    let st = *s.stats();
    assert_eq!(
        (
            st.enqueued,
            st.executed,
            st.suspended,
            st.resumed,
            st.rejected
        ),
        (3, 3, 1, 1, 0)
    );
    assert_eq!(st.interrupts_by_level, [0, 2, 0, 0, 0]);
    assert_eq!(st.preempts_by_level, [0, 1, 0, 0, 0]);
    assert_eq!(st.preempted(), 1);
}

#[test]
fn preempted_is_the_sum_of_preempts_by_level_not_suspended() {
    let now = Instant::now();
    let mut s = sched();
    let q = run_queued(&mut s, "q", now);
    assert!(preempted(&s.register_interrupt("a", Level::L2, now)));
    assert!(preempted(&s.register_interrupt("b", Level::L3, now)));
    s.done(q.id); // the victim finished before its safe point
    assert_eq!(s.preempt_level(), None, "done disarms");
    assert_eq!(s.stats().preempts_by_level, [0, 0, 1, 1, 0]);
    assert_eq!(s.stats().preempted(), 2);
    assert_eq!(s.stats().suspended, 0);
}

#[test]
fn backpressure_is_counted_on_the_transition_to_full() {
    let mut s = sched();
    assert!(s.note_backpressure(true));
    assert!(!s.note_backpressure(true));
    assert!(!s.note_backpressure(false));
    assert!(s.note_backpressure(true));
    assert_eq!(s.stats().backpressure, 2);
}

#[test]
fn snapshot_reports_every_container() {
    let now = Instant::now();
    let mut s = sched();
    let q = run_queued(&mut s, "q", now);
    assert!(preempted(&s.register_interrupt("a", Level::L1, now)));
    let q_id = q.id;
    s.suspend(q, 0, now);
    let a = start_new(&mut s, now);
    let b = s.register_interrupt("b", Level::L2, now).id();
    let c = s.register_interrupt("c", Level::L1, now).id();
    let r = s.enqueue("r", TaskKind::SelfInput, now).expect("room");
    s.arm_stop(3);

    let snap = s.snapshot_with(|i| i.to_uppercase());
    assert_eq!(snap.running.map(|t| (t.id, t.level)), Some((a.id, 1)));
    assert_eq!(snap.immediate.as_ref().map(|t| t.id), Some(b));
    assert_eq!(snap.interrupt_queues[0].tasks[0].id, c);
    assert_eq!(snap.interrupt_queues[0].name, "L1-background");
    assert_eq!(snap.queue[0].summary.as_deref(), Some("R"));
    assert_eq!(snap.stack[0].id, q_id);
    assert_eq!(snap.stack[0].level, 0, "queued tasks have no level");
    assert_eq!(snap.pending_interrupts, 2);
    assert_eq!(snap.preempted, 2);
    assert_eq!(snap.preempt_level, Some(2));
    assert_eq!(snap.cancel_budget, 4);

    let json = serde_json::to_value(&snap).expect("serialisable");
    assert_eq!(json["max_interrupt_frames"], 4);
    assert_eq!(json["max_queue"], 256);
    assert_eq!(json["queue"][0]["kind"], "self");
    assert_eq!(json["queue"][0]["id"], r);
    assert_eq!(json["immediate"]["class"], "interrupt");
    assert_eq!(json["stack"][0]["class"], "queued");
    assert_eq!(json["stats"]["preempts_by_level"][1], 1);
    assert!(json["queue"][0].get("summary").is_some());
    let bare = serde_json::to_value(s.snapshot()).expect("serialisable");
    assert!(bare["queue"][0].get("summary").is_none());
}

#[test]
fn drain_all_returns_every_waiting_task_with_its_frame() {
    let now = Instant::now();
    let mut s = sched();
    let q = run_queued(&mut s, "q", now);
    assert!(preempted(&s.register_interrupt("a", Level::L1, now)));
    let q_id = q.id;
    s.suspend(q, 42, now);
    let a = start_new(&mut s, now);
    let b = s.register_interrupt("b", Level::L2, now).id(); // immediate
    let c = s.register_interrupt("c", Level::L1, now).id();
    let d = s.register_interrupt("d", Level::L4, now).id(); // demotes b
    let r = s.enqueue("r", TaskKind::Input, now).expect("room");

    let drained: Vec<(TaskId, Option<u32>)> = s
        .drain_all()
        .into_iter()
        .map(|d| {
            let (t, f) = d.into_parts();
            (t.id, f)
        })
        .collect();
    assert_eq!(
        drained,
        [(d, None), (b, None), (c, None), (q_id, Some(42)), (r, None)]
    );
    assert_eq!(s.running().map(|t| t.id), Some(a.id), "running stays");
    assert_eq!(s.preempt_level(), None);
    assert_eq!(
        (s.pending_interrupts(), s.stack_depth(), s.ready_len()),
        (0, 0, 0)
    );
    s.done(a.id);
    assert!(s.is_idle());
}
