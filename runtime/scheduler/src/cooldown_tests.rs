//! The preemption cooldown measured in the scheduler's injected time, with literal durations:
//! the other tests name [`PREEMPT_COOLDOWN`] and would follow any change of the constant.

use std::time::{Duration, Instant};

use super::*;

type S = Scheduler<&'static str, u32>;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A queued task preempted at `t0` by an L1 interrupt that has already finished: the victim is
/// running again, its cooldown counting from `t0`.
fn resumed_victim(cfg: SchedulerConfig, t0: Instant) -> (S, Task<&'static str>) {
    let mut s = Scheduler::new(cfg);
    s.enqueue("victim", TaskKind::Input, t0).expect("room");
    let Some(Next::New(victim)) = s.next(t0) else {
        panic!("the victim starts");
    };
    assert!(matches!(
        s.register_interrupt("first", Level::L1, t0),
        Registered::Preempted { .. }
    ));
    s.suspend(victim, 0, t0);
    let Some(Next::New(first)) = s.next(t0) else {
        panic!("the interrupt runs");
    };
    s.done(first.id);
    let Some(Next::Resume(victim, _)) = s.next(t0 + ms(10)) else {
        panic!("the victim resumes");
    };
    (s, victim)
}

/// SPEC §2.2: the default cooldown is two seconds — an interrupt 1.9 s after the last preemption
/// is only queued and not re-armed until 2.0 s, and one arriving at 2.0 s preempts at once.
#[test]
fn the_default_cooldown_is_two_seconds() {
    let t0 = Instant::now();

    let (mut s, _victim) = resumed_victim(SchedulerConfig::default(), t0);
    assert!(
        matches!(
            s.register_interrupt("early", Level::L2, t0 + ms(1900)),
            Registered::Queued { .. }
        ),
        "1.9 s after a preemption the victim is still cooling down"
    );
    assert!(!s.rearm_pending(t0 + ms(1999)), "still inside the cooldown");
    assert!(s.rearm_pending(t0 + ms(2000)), "the cooldown ends at 2 s");

    let (mut s, _victim) = resumed_victim(SchedulerConfig::default(), t0);
    assert!(
        matches!(
            s.register_interrupt("on time", Level::L2, t0 + ms(2000)),
            Registered::Preempted { .. }
        ),
        "2 s after a preemption the victim can be preempted again"
    );
}

/// SPEC §2.2: the configured cooldown, not the default, gates both paths (registration and the
/// safe-point re-arm).
#[test]
fn a_configured_cooldown_replaces_the_default() {
    let t0 = Instant::now();
    let cfg = SchedulerConfig {
        cooldown: ms(500),
        ..SchedulerConfig::default()
    };
    let (mut s, _victim) = resumed_victim(cfg, t0);
    assert!(matches!(
        s.register_interrupt("early", Level::L2, t0 + ms(499)),
        Registered::Queued { .. }
    ));
    assert!(!s.rearm_pending(t0 + ms(499)));
    assert!(s.rearm_pending(t0 + ms(500)));
}
