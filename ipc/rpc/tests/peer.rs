//! Two peers over real pipes inside one process: correlation under concurrency, nested calls,
//! timeouts, busy refusals, closing, oversize answers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hearth_rpc::{
    ConnectionConfig, ErrorKind, HandlerError, Incoming, Peer, RpcError, Service, connect,
};
use serde_json::{Value, json};

#[path = "support/watchdog.rs"]
mod watchdog;

use watchdog::watchdog;

const WAIT: Duration = Duration::from_secs(10);

/// `add` adds, `ask` asks the other side to add (a nested call), `sleep` sleeps, `big` answers
/// more than the frame limit.
#[derive(Default)]
struct Calc {
    running: AtomicUsize,
    max_running: AtomicUsize,
}

impl Service for Calc {
    fn call(&self, req: Incoming) -> Result<Value, HandlerError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_running.fetch_max(now, Ordering::SeqCst);
        let result = match req.method.as_str() {
            "add" => Ok(json!(
                req.params["a"].as_u64().unwrap_or(0) + req.params["b"].as_u64().unwrap_or(0)
            )),
            "ask" => req
                .peer
                .call("add", req.params, WAIT)
                .map_err(HandlerError::from),
            "sleep" => {
                let until =
                    Instant::now() + Duration::from_millis(req.params["ms"].as_u64().unwrap_or(0));
                while Instant::now() < until && !req.cancel.is_cancelled() {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Ok(json!(req.cancel.is_cancelled()))
            }
            "big" => Ok(json!("z".repeat(4096))),
            other => Err(HandlerError::method_not_found(other)),
        };
        self.running.fetch_sub(1, Ordering::SeqCst);
        result
    }
}

fn pair(max_in_flight: usize, max_frame: usize) -> (Peer, Peer, Arc<Calc>) {
    let (a_read, b_write) = std::io::pipe().expect("pipe");
    let (b_read, a_write) = std::io::pipe().expect("pipe");
    let config = |name: &str| ConnectionConfig {
        max_frame,
        max_in_flight,
        name: name.into(),
        ..ConnectionConfig::default()
    };
    let calc = Arc::new(Calc::default());
    let a = connect(a_read, a_write, Arc::clone(&calc), config("a"));
    let b = connect(b_read, b_write, Arc::clone(&calc), config("b"));
    (a, b, calc)
}

#[test]
fn concurrent_and_nested_calls_get_their_own_answers() {
    watchdog(Duration::from_secs(60), || {
        let (a, b, _) = pair(64, 1 << 20);
        std::thread::scope(|s| {
            for t in 0..8u64 {
                let (a, b) = (&a, &b);
                s.spawn(move || {
                    for i in 0..300u64 {
                        let (peer, method) = if i % 2 == 0 { (a, "add") } else { (b, "ask") };
                        let got = peer
                            .call(method, json!({"a": t * 1000, "b": i}), WAIT)
                            .expect("answer");
                        assert_eq!(got, json!(t * 1000 + i), "thread {t} call {i}");
                    }
                });
            }
        });
        for peer in [&a, &b] {
            let stats = peer.stats();
            assert_eq!(
                (
                    stats.bad_frames,
                    stats.unknown_responses,
                    stats.busy_rejections
                ),
                (0, 0, 0)
            );
        }
    });
}

#[test]
fn requests_over_the_in_flight_bound_are_refused_busy() {
    watchdog(Duration::from_secs(60), || {
        let (a, b, calc) = pair(3, 1 << 20);
        let calls: Vec<_> = (0..10)
            .map(|_| a.start_call("sleep", json!({"ms": 200})).expect("sent"))
            .collect();
        let outcomes: Vec<_> = calls.into_iter().map(|c| c.wait(WAIT)).collect();
        let busy = outcomes
            .iter()
            .filter(|o| matches!(o, Err(RpcError::Remote { error, .. }) if error.kind == ErrorKind::Busy))
            .count();
        let ok = outcomes.iter().filter(|o| o.is_ok()).count();
        assert_eq!((ok, busy), (3, 7), "{outcomes:?}");
        assert_eq!(b.stats().busy_rejections, 7);
        assert!(calc.max_running.load(Ordering::SeqCst) <= 3);
    });
}

#[test]
fn a_timed_out_call_is_cancelled_and_its_late_answer_dropped() {
    watchdog(Duration::from_secs(60), || {
        let (a, _b, _) = pair(8, 1 << 20);
        let err = a
            .call("sleep", json!({"ms": 5_000}), Duration::from_millis(50))
            .expect_err("times out");
        assert!(matches!(err, RpcError::TimedOut { .. }), "{err:?}");
        // `$/cancel` stops the handler early, and its answer arrives for no one.
        let until = Instant::now() + Duration::from_secs(3);
        while a.stats().unknown_responses == 0 {
            assert!(
                Instant::now() < until,
                "the cancelled handler never answered"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(
            a.call("add", json!({"a": 1, "b": 1}), WAIT)
                .expect("still works"),
            json!(2)
        );
    });
}

#[test]
fn an_answer_over_the_frame_limit_becomes_an_error_answer() {
    watchdog(Duration::from_secs(60), || {
        let (a, _b, _) = pair(8, 1024);
        match a.call("big", Value::Null, WAIT) {
            Err(RpcError::Remote { error, .. }) => {
                assert_eq!(error.kind, ErrorKind::FrameTooLarge);
                assert_eq!(error.data.expect("data")["limit"], 1024);
            }
            other => panic!("{other:?}"),
        }
        let err = a
            .call("add", json!({"pad": "p".repeat(2048)}), WAIT)
            .expect_err("request too large");
        assert!(
            matches!(err, RpcError::OutgoingTooLarge { limit: 1024, .. }),
            "{err:?}"
        );
        assert_eq!(
            a.call("add", json!({"a": 2, "b": 3}), WAIT).expect("fine"),
            json!(5)
        );
    });
}

#[test]
fn closing_the_stream_fails_pending_calls() {
    watchdog(Duration::from_secs(60), || {
        let (a_read, b_write) = std::io::pipe().expect("pipe");
        let (_b_read, a_write) = std::io::pipe().expect("pipe");
        let a = connect(
            a_read,
            a_write,
            Arc::new(Calc::default()),
            ConnectionConfig::default(),
        );
        // Nobody serves `a`'s calls; the call waits until the other end closes.
        let call = a.start_call("add", json!({})).expect("sent");
        let closer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(b_write);
        });
        assert!(matches!(call.wait(WAIT), Err(RpcError::Closed { .. })));
        closer.join().expect("closer");
        assert!(a.wait_closed(WAIT));
        assert!(matches!(
            a.call("add", json!({}), WAIT),
            Err(RpcError::Closed { .. })
        ));
    });
}

#[test]
fn a_duplicate_request_id_is_refused() {
    watchdog(Duration::from_secs(60), || {
        use std::io::{BufRead, BufReader, Write};
        let (a_read, mut raw_write) = std::io::pipe().expect("pipe");
        let (raw_read, a_write) = std::io::pipe().expect("pipe");
        let _a = connect(
            a_read,
            a_write,
            Arc::new(Calc::default()),
            ConnectionConfig::default(),
        );
        raw_write
            .write_all(b"{\"id\":9,\"method\":\"sleep\",\"params\":{\"ms\":300}}\n{\"id\":9,\"method\":\"add\"}\n")
            .expect("write");
        let mut lines = BufReader::new(raw_read).lines();
        let first: Value =
            serde_json::from_str(&lines.next().expect("line").expect("io")).expect("json");
        assert_eq!(first["id"], 9);
        assert_eq!(first["error"]["code"], ErrorKind::InvalidRequest.code());
        let second: Value =
            serde_json::from_str(&lines.next().expect("line").expect("io")).expect("json");
        assert_eq!(second, json!({"jsonrpc": "2.0", "id": 9, "result": false}));
    });
}
