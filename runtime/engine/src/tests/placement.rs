//! Where nodes and edges live: a node placed after start is adopted, an edge binds to the worker
//! that first reads it, and the builder and placement refuse what cannot be.

use super::*;

#[test]
fn node_placed_after_start_is_adopted_and_its_edge_binds_to_its_worker() {
    watchdog(Duration::from_secs(10), || {
        let mut engine = engine(2);
        engine.start().expect("workers start");
        let (tx, input) = edge::<Instant>(4);
        let (report, reports) = mpsc::channel();
        engine
            .spawn(1, Stamper { input, report })
            .expect("worker exists");
        wait_parked(&engine, 1);
        tx.try_send(Instant::now()).expect("room");
        reports
            .recv_timeout(Duration::from_secs(2))
            .expect("the late node runs");
        let report = engine.shutdown();
        assert_eq!(report.workers[1].nodes, ["stamper"]);
    });
}

#[test]
fn edge_binds_to_the_worker_that_first_reads_it() {
    watchdog(Duration::from_secs(10), || {
        let mut engine = engine(2);
        let (tx, input) = edge::<u8>(1);
        assert_eq!(input.bound_worker(), None);
        input.is_empty(); // a read on a non-worker thread does not bind
        assert_eq!(input.bound_worker(), None);
        let bound = Arc::new(AtomicU64::new(u64::MAX));

        struct Probe {
            input: EdgeRx<u8>,
            bound: Arc<AtomicU64>,
        }
        impl Node for Probe {
            fn name(&self) -> &str {
                "probe"
            }
            fn poll(&mut self, _cx: &mut NodeCx<'_>) -> Poll {
                let _ = self.input.try_recv();
                if let Some(worker) = self.input.bound_worker() {
                    self.bound.store(worker as u64, Ordering::SeqCst);
                }
                Poll::IDLE
            }
        }
        engine
            .spawn(
                1,
                Probe {
                    input,
                    bound: Arc::clone(&bound),
                },
            )
            .expect("worker exists");
        engine.start().expect("workers start");
        wait_until(
            Duration::from_secs(2),
            "the probe reports its binding",
            || bound.load(Ordering::SeqCst) != u64::MAX,
        );
        assert_eq!(bound.load(Ordering::SeqCst), 1);
        drop(tx);
        engine.shutdown();
    });
}

#[test]
fn builder_and_placement_errors() {
    assert!(matches!(
        Engine::builder().workers(0).build(),
        Err(EngineError::NoWorkers)
    ));
    let mut engine = engine(2);
    assert_eq!(engine.worker_count(), 2);
    assert!(matches!(
        engine.spawn(2, Sleeper),
        Err(EngineError::NoSuchWorker {
            worker: 2,
            count: 2
        })
    ));
    let first = engine.spawn(0, Sleeper).expect("worker exists");
    let second = engine
        .spawn(1, Box::new(Sleeper) as Box<dyn Node>)
        .expect("worker exists");
    assert_ne!(first, second);
    assert!(engine.stats(2).is_none());
    engine.start().expect("workers start");
    assert!(engine.is_started());
    assert!(matches!(engine.start(), Err(EngineError::AlreadyStarted)));
    let default_workers = Engine::builder().build().expect("defaults are valid");
    assert!(default_workers.worker_count() >= 1);
}
