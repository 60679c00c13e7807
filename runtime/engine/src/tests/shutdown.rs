//! Shutdown: a final pass, then each node's `shutdown`, then the join, whether or not the engine
//! was ever started.

use super::*;

/// Records its final poll and its shutdown; optionally holds a value it flushes only then.
struct Recorder {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
    flush: Option<(EdgeTx<&'static str>, &'static str)>,
    saw_final: bool,
}

impl Node for Recorder {
    fn name(&self) -> &str {
        self.name
    }

    fn poll(&mut self, cx: &mut NodeCx<'_>) -> Poll {
        if cx.is_shutting_down() && !self.saw_final {
            self.saw_final = true;
            self.log
                .lock()
                .expect("log lock")
                .push(format!("final {}", self.name));
            if let Some((out, value)) = &self.flush {
                out.try_send(value).expect("room for the flush");
            }
        }
        Poll::IDLE
    }

    fn shutdown(&mut self) {
        self.log
            .lock()
            .expect("log lock")
            .push(format!("shutdown {}", self.name));
    }
}

fn recorder(name: &'static str, log: &Arc<Mutex<Vec<String>>>) -> Recorder {
    Recorder {
        name,
        log: Arc::clone(log),
        flush: None,
        saw_final: false,
    }
}

fn assert_final_then_shutdown(log: &[String], names: &[&str]) {
    for name in names {
        let final_at = log.iter().position(|l| *l == format!("final {name}"));
        let shutdown_at = log.iter().position(|l| *l == format!("shutdown {name}"));
        match (final_at, shutdown_at) {
            (Some(f), Some(s)) => assert!(f < s, "{name}: shutdown before final poll in {log:?}"),
            _ => panic!("{name}: missing final poll or shutdown in {log:?}"),
        }
    }
}

#[test]
fn shutdown_runs_a_final_pass_then_node_shutdown_and_joins() {
    watchdog(Duration::from_secs(10), || {
        let mut engine = engine(2);
        let log = Arc::new(Mutex::new(Vec::new()));
        let (flush_tx, flushed) = edge(1);
        engine.spawn(0, recorder("a", &log)).expect("worker exists");
        engine.spawn(0, recorder("b", &log)).expect("worker exists");
        engine.spawn(1, recorder("c", &log)).expect("worker exists");
        let mut flusher = recorder("flusher", &log);
        flusher.flush = Some((flush_tx, "buffered"));
        engine.spawn(1, flusher).expect("worker exists");
        engine.start().expect("workers start");
        wait_until(
            Duration::from_secs(5),
            "both workers adopt their nodes",
            || {
                (0..2).all(|w| {
                    engine
                        .stats(w)
                        .is_some_and(|s| s.nodes == 2 && s.passes > 0)
                })
            },
        );
        assert!(
            log.lock().expect("log lock").is_empty(),
            "nothing shut down early"
        );

        let report = engine.shutdown();
        assert!(report.all_joined());
        assert_eq!(report.workers.len(), 2);
        assert_eq!(
            report.nodes().collect::<Vec<_>>(),
            ["a", "b", "c", "flusher"]
        );
        assert_final_then_shutdown(&log.lock().expect("log lock"), &["a", "b", "c", "flusher"]);
        // The flush made it out, and the node (with its sender) is gone after the join.
        assert_eq!(flushed.try_recv(), Ok("buffered"));
        assert_eq!(flushed.try_recv(), Err(TryRecvError::Disconnected));
    });
}

#[test]
fn shutdown_of_an_engine_never_started_still_shuts_every_node_down() {
    watchdog(Duration::from_secs(10), || {
        let engine = engine(2);
        let log = Arc::new(Mutex::new(Vec::new()));
        engine.spawn(1, recorder("x", &log)).expect("worker exists");
        let report = engine.shutdown();
        assert_eq!(report.nodes().collect::<Vec<_>>(), ["x"]);
        assert_final_then_shutdown(&log.lock().expect("log lock"), &["x"]);
    });
}
