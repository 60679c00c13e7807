//! Deadlines a node asks for with `Poll::idle_until`: they fire in order, on time, while the
//! worker parks between them.

use super::*;

/// Fires once when its deadline, set on the first poll, has passed.
struct Timer {
    delay: Duration,
    deadline: Option<Instant>,
    fired: mpsc::Sender<(Duration, Instant, Instant)>,
    done: bool,
}

impl Node for Timer {
    fn name(&self) -> &str {
        "timer"
    }

    fn poll(&mut self, cx: &mut NodeCx<'_>) -> Poll {
        if self.done {
            return Poll::IDLE;
        }
        let deadline = *self.deadline.get_or_insert(cx.now() + self.delay);
        if cx.now() < deadline {
            return Poll::idle_until(deadline);
        }
        self.done = true;
        let _ = self.fired.send((self.delay, deadline, Instant::now()));
        Poll::Busy
    }
}

#[test]
fn idle_until_deadlines_fire_in_order_while_the_worker_parks() {
    watchdog(Duration::from_secs(10), || {
        let mut engine = engine(1);
        let (fired_tx, fired) = mpsc::channel();
        for millis in [90, 30, 60] {
            engine
                .spawn(
                    0,
                    Timer {
                        delay: Duration::from_millis(millis),
                        deadline: None,
                        fired: fired_tx.clone(),
                        done: false,
                    },
                )
                .expect("worker exists");
        }
        engine.start().expect("workers start");
        let mut order = Vec::new();
        for _ in 0..3 {
            let (delay, deadline, at) = fired
                .recv_timeout(Duration::from_secs(3))
                .expect("every timer fires");
            assert!(at >= deadline, "fired early");
            let late = at - deadline;
            assert!(late < Duration::from_millis(500), "fired {late:?} late");
            order.push(delay.as_millis());
        }
        assert_eq!(order, [30, 60, 90]);
        let stats = engine.stats(0).expect("worker exists");
        assert!(
            stats.parks >= 3,
            "the worker slept between deadlines: {stats:?}"
        );
        // Busy-polling for 90 ms would be hundreds of thousands of polls.
        assert!(stats.polls < 20_000, "{stats:?}");
        engine.shutdown();
    });
}
