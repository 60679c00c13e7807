//! One call's answer, handed from whichever thread reads it to the caller that waits for it.
//!
//! A caller reads its own answer when nobody else reads (see `lead`); this slot is for the
//! other case, a caller waiting while another thread holds the reader. A channel would wake
//! the caller through a futex every time: the reading thread pays the wake-up syscall and the
//! answer waits for the caller to be scheduled again. When a caller is the connection's only
//! waiter it spins for a short while first, so an answer that comes back quickly is taken on
//! the spot; a slow answer still parks the caller on a condition variable, so an idle
//! connection costs no CPU. The slot also carries the hand-off of the reader itself: a nudge
//! wakes the caller to read for itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::lock_ok;
use crate::error_code::ErrorObject;

/// Why a waiting caller woke.
pub(super) enum Woken {
    /// Its answer.
    Answer(Answer),
    /// The reader was handed to it: it should read for itself.
    Nudged,
    /// The deadline passed.
    TimedOut,
}

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
    /// Set once the answer or a nudge is in `state`; read while spinning so the mutex is not
    /// hammered.
    signal: AtomicBool,
    /// Set once the answer is in; read by a caller that reads the pipe itself.
    filled: AtomicBool,
    state: Mutex<State>,
    parked: Condvar,
}

#[derive(Default)]
struct State {
    answer: Option<Answer>,
    /// The caller sleeps on `parked`; only then does filling pay for a notify.
    sleeping: bool,
    /// The reader was handed to this caller and it has not yet taken note.
    nudged: bool,
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
            // SYNC: Release pairs with the Acquire loads in `wait`'s spin and in `is_filled`:
            // a caller that sees a flag finds the answer when it takes the lock.
            self.filled.store(true, Ordering::Release);
            self.signal.store(true, Ordering::Release);
            state.sleeping
        };
        if wake {
            self.parked.notify_one();
        }
    }

    /// Tells the waiting caller the reader is free for it.
    pub fn nudge(&self) {
        let wake = {
            let mut state = lock_ok(&self.state);
            state.nudged = true;
            // SYNC: Release pairs with the Acquire load in `wait`'s spin.
            self.signal.store(true, Ordering::Release);
            state.sleeping
        };
        if wake {
            self.parked.notify_one();
        }
    }

    /// Whether the answer is in (a caller reading for itself stops at once).
    pub fn is_filled(&self) -> bool {
        // SYNC: pairs with the Release store in `fill`.
        self.filled.load(Ordering::Acquire)
    }

    /// Takes the answer if it is in, without waiting.
    pub fn try_take(&self) -> Option<Answer> {
        if !self.is_filled() {
            return None;
        }
        lock_ok(&self.state).answer.take()
    }

    /// Waits until `deadline` for the answer or a nudge, spinning for up to `spin` first.
    pub fn wait(&self, deadline: Instant, spin: Duration) -> Woken {
        let started = Instant::now();
        let spin = spin.min(deadline.saturating_duration_since(started));
        if !spin.is_zero() {
            'spin: loop {
                for _ in 0..SPIN_TURNS_PER_CHECK {
                    // SYNC: pairs with the Release stores in `fill` and `nudge`.
                    if self.signal.load(Ordering::Acquire) {
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
                return Woken::Answer(answer);
            }
            if std::mem::take(&mut state.nudged) {
                self.signal.store(false, Ordering::Relaxed);
                return Woken::Nudged;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Woken::TimedOut;
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

    fn reply(woken: Woken) -> Option<Value> {
        match woken {
            Woken::Answer(Answer::Reply(Ok(v))) => Some(v),
            _ => None,
        }
    }

    fn after(d: Duration) -> Instant {
        Instant::now() + d
    }

    #[test]
    fn an_answer_filled_before_the_wait_is_taken_at_once() {
        let slot = Slot::default();
        slot.fill(Answer::Reply(Ok(Value::from(1))));
        assert_eq!(
            reply(slot.wait(Instant::now(), Duration::ZERO)),
            Some(Value::from(1))
        );
    }

    #[test]
    fn the_first_fill_wins() {
        let slot = Slot::default();
        slot.fill(Answer::Reply(Ok(Value::from(1))));
        slot.fill(Answer::Closed);
        assert_eq!(
            reply(slot.wait(after(Duration::from_secs(1)), SPIN)),
            Some(Value::from(1))
        );
    }

    #[test]
    fn an_empty_slot_times_out() {
        let slot = Slot::default();
        let started = Instant::now();
        assert!(matches!(
            slot.wait(after(Duration::from_millis(20)), SPIN),
            Woken::TimedOut
        ));
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
            let got = reply(slot.wait(after(Duration::from_secs(30)), SPIN));
            assert_eq!(got, Some(Value::from(round)));
            filler.join().expect("filler");
        }
    }

    /// A nudge wakes a parked or spinning caller once; the answer after it is still delivered.
    #[test]
    fn a_nudge_wakes_the_caller_once_and_the_answer_still_comes() {
        for round in 0..100u64 {
            let slot = Arc::new(Slot::default());
            let other = {
                let slot = Arc::clone(&slot);
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_micros(round * 7));
                    slot.nudge();
                    slot.fill(Answer::Reply(Ok(Value::from(round))));
                })
            };
            let first = slot.wait(after(Duration::from_secs(30)), SPIN);
            let value = match first {
                Woken::Nudged => reply(slot.wait(after(Duration::from_secs(30)), SPIN)),
                // The fill may land before the caller looks: the answer wins over the nudge.
                other => reply(other),
            };
            assert_eq!(value, Some(Value::from(round)));
            other.join().expect("nudger");
        }
    }
}
