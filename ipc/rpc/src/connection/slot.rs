//! One call's answer, handed from the reading thread to the caller that waits for it.
//!
//! A channel would wake the caller through a futex every time: the reading thread pays the
//! wake-up syscall and the answer waits for the caller to be scheduled again, one more thread
//! wake per round trip than a bare pipe ping-pong. When a caller is the connection's only
//! waiter it spins for a short while first, so an answer that comes back quickly (a cheap tool,
//! a reverse call) is taken on the spot and the reading thread never calls into the kernel for
//! it; a slow answer still parks the caller on a condition variable, so an idle connection
//! costs no CPU.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::lock_ok;
use crate::error_code::ErrorObject;

/// What a waiting caller is given.
pub(super) enum Answer {
    /// The peer's result or error.
    Reply(Result<Value, ErrorObject>),
    /// The connection closed before an answer came.
    Closed,
}

/// How long a lone caller spins before it parks. About two pipe round trips on a loaded
/// machine: long enough for a cheap call's answer, short enough that a slow one wastes little.
pub(super) const SPIN: Duration = Duration::from_micros(60);

/// Spins between clock reads; reading the clock every turn would cost more than the spin.
const SPIN_TURNS_PER_CHECK: u32 = 64;

#[derive(Default)]
pub(super) struct Slot {
    /// Set once the answer is in `state`; read while spinning so the mutex is not hammered.
    filled: AtomicBool,
    state: Mutex<State>,
    parked: Condvar,
}

#[derive(Default)]
struct State {
    answer: Option<Answer>,
    /// The caller sleeps on `parked`; only then does filling pay for a notify.
    sleeping: bool,
}

impl Slot {
    /// Puts the answer in; the first one wins (a close racing a reply changes nothing).
    pub fn fill(&self, answer: Answer) {
        let wake = {
            let mut state = lock_ok(&self.state);
            if state.answer.is_some() {
                return;
            }
            state.answer = Some(answer);
            // SYNC: Release pairs with the Acquire load in `wait`'s spin: a caller that sees
            // the flag finds the answer when it takes the lock.
            self.filled.store(true, Ordering::Release);
            state.sleeping
        };
        if wake {
            self.parked.notify_one();
        }
    }

    /// Waits up to `timeout` for the answer, spinning for up to `spin` first; `None` on timeout.
    pub fn wait(&self, timeout: Duration, spin: Duration) -> Option<Answer> {
        let started = Instant::now();
        let spin = spin.min(timeout);
        if !spin.is_zero() {
            'spin: loop {
                for _ in 0..SPIN_TURNS_PER_CHECK {
                    // SYNC: pairs with the Release store in `fill`.
                    if self.filled.load(Ordering::Acquire) {
                        break 'spin;
                    }
                    std::hint::spin_loop();
                }
                if started.elapsed() >= spin {
                    break;
                }
            }
        }
        let mut state = lock_ok(&self.state);
        loop {
            if let Some(answer) = state.answer.take() {
                return Some(answer);
            }
            let left = timeout.checked_sub(started.elapsed())?;
            if left.is_zero() {
                return None;
            }
            state.sleeping = true;
            state = self
                .parked
                .wait_timeout(state, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            state.sleeping = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn reply(answer: Option<Answer>) -> Option<Value> {
        match answer {
            Some(Answer::Reply(Ok(v))) => Some(v),
            _ => None,
        }
    }

    #[test]
    fn an_answer_filled_before_the_wait_is_taken_at_once() {
        let slot = Slot::default();
        slot.fill(Answer::Reply(Ok(Value::from(1))));
        assert_eq!(
            reply(slot.wait(Duration::ZERO, Duration::ZERO)),
            Some(Value::from(1))
        );
    }

    #[test]
    fn the_first_fill_wins() {
        let slot = Slot::default();
        slot.fill(Answer::Reply(Ok(Value::from(1))));
        slot.fill(Answer::Closed);
        assert_eq!(
            reply(slot.wait(Duration::from_secs(1), SPIN)),
            Some(Value::from(1))
        );
    }

    #[test]
    fn an_empty_slot_times_out() {
        let slot = Slot::default();
        let started = Instant::now();
        assert!(slot.wait(Duration::from_millis(20), SPIN).is_none());
        assert!(started.elapsed() >= Duration::from_millis(20));
    }

    /// Answers given after the spin ended must wake the parked caller; ones given during the
    /// spin must be seen by it. Many rounds with the fill at varying delays cover both.
    #[test]
    fn a_fill_from_another_thread_reaches_a_spinning_or_parked_caller() {
        for round in 0..200u64 {
            let slot = Arc::new(Slot::default());
            let filler = {
                let slot = Arc::clone(&slot);
                std::thread::spawn(move || {
                    if round % 2 == 1 {
                        std::thread::sleep(Duration::from_micros(round * 5));
                    }
                    slot.fill(Answer::Reply(Ok(Value::from(round))));
                })
            };
            // The watchdog: a lost wake-up fails here instead of hanging.
            let got = reply(slot.wait(Duration::from_secs(30), SPIN));
            assert_eq!(got, Some(Value::from(round)));
            filler.join().expect("filler");
        }
    }
}
