//! The reader hand-off under stress: callers that read their own answers, workers that hand
//! the reader on lazily, calls back from inside handlers, long handlers beside short ones,
//! timeouts and closes of a caller that is reading, over real pipes.

use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use hearth_rpc::{ConnectionConfig, HandlerError, Incoming, Peer, RpcError, Service, connect};
use serde_json::{Value, json};

#[path = "support/watchdog.rs"]
mod watchdog;

use watchdog::watchdog;

const WAIT: Duration = Duration::from_secs(20);

/// `add` adds; `back` asks the calling side to add (a call back from inside the handler);
/// `nest` recurses across the two sides `depth` times; `hold` blocks until the gate opens or
/// the call is cancelled.
#[derive(Default)]
struct Relay {
    gate: (Mutex<bool>, Condvar),
    saw_cancel: AtomicBool,
}

impl Relay {
    fn open(&self) {
        *self.gate.0.lock().expect("gate") = true;
        self.gate.1.notify_all();
    }
}

impl Service for Relay {
    fn call(&self, req: Incoming) -> Result<Value, HandlerError> {
        let p = &req.params;
        match req.method.as_str() {
            "add" => Ok(json!(
                p["a"].as_u64().unwrap_or(0) + p["b"].as_u64().unwrap_or(0)
            )),
            "back" => req
                .peer
                .call("add", req.params, WAIT)
                .map_err(HandlerError::from),
            "nest" => match p["depth"].as_u64().unwrap_or(0) {
                0 => Ok(json!(0)),
                depth => {
                    let inner = req
                        .peer
                        .call("nest", json!({"depth": depth - 1}), WAIT)
                        .map_err(HandlerError::from)?;
                    Ok(json!(inner.as_u64().unwrap_or(0) + 1))
                }
            },
            "hold" => {
                let (lock, cvar) = &self.gate;
                let mut open = lock.lock().expect("gate");
                while !*open && !req.cancel.is_cancelled() {
                    open = cvar
                        .wait_timeout(open, Duration::from_millis(2))
                        .expect("gate")
                        .0;
                }
                if req.cancel.is_cancelled() {
                    self.saw_cancel.store(true, Ordering::SeqCst);
                }
                Ok(json!(*open))
            }
            other => Err(HandlerError::method_not_found(other)),
        }
    }
}

fn pair() -> (Peer, Peer, Arc<Relay>, Arc<Relay>) {
    named_pair("a", "b")
}

fn named_pair(a_name: &str, b_name: &str) -> (Peer, Peer, Arc<Relay>, Arc<Relay>) {
    let (a_read, b_write) = std::io::pipe().expect("pipe");
    let (b_read, a_write) = std::io::pipe().expect("pipe");
    let config = |name: &str| ConnectionConfig {
        name: name.into(),
        ..ConnectionConfig::default()
    };
    let (ra, rb) = (Arc::new(Relay::default()), Arc::new(Relay::default()));
    let a = connect(a_read, a_write, Arc::clone(&ra), config(a_name));
    let b = connect(b_read, b_write, Arc::clone(&rb), config(b_name));
    (a, b, ra, rb)
}

/// Voluntary context switches so far of this process's threads named `rpc-<prefix>…`.
fn switches_of(prefix: &str) -> u64 {
    let name = format!("rpc-{prefix}");
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task")
        .expect("tasks")
        .flatten()
    {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !comm.starts_with(&name) {
            continue;
        }
        let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        total += status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    total
}

fn clean(peer: &Peer) {
    let s = peer.stats();
    assert_eq!(
        (
            s.bad_frames,
            s.unknown_responses,
            s.busy_rejections,
            s.panics
        ),
        (0, 0, 0, 0),
        "{s:?}"
    );
}

#[test]
fn interleaved_calls_both_ways_with_calls_back_all_get_their_answers() {
    watchdog(Duration::from_secs(120), || {
        let (a, b, _, _) = pair();
        std::thread::scope(|s| {
            for t in 0..12u64 {
                let (from, to) = if t % 2 == 0 { (&a, &b) } else { (&b, &a) };
                let _ = to;
                s.spawn(move || {
                    for i in 0..250u64 {
                        let (method, params, want) = match i % 3 {
                            0 => ("add", json!({"a": t * 1000, "b": i}), t * 1000 + i),
                            1 => ("back", json!({"a": t, "b": i * 7}), t + i * 7),
                            _ => ("nest", json!({"depth": i % 5}), i % 5),
                        };
                        let got = from.call(method, params, WAIT).expect("answer");
                        assert_eq!(got, json!(want), "thread {t} call {i} ({method})");
                    }
                });
            }
        });
        clean(&a);
        clean(&b);
        assert!(
            a.stats().own_answers + b.stats().own_answers > 0,
            "no caller ever read its own answer"
        );
    });
}

/// One caller at a time, back to back: the shape where the caller reads for itself.
#[test]
fn back_to_back_calls_are_read_by_their_callers_and_calls_back_are_served() {
    watchdog(Duration::from_secs(120), || {
        let (a, b, _, _) = pair();
        for i in 0..2_000u64 {
            let got = a.call("nest", json!({"depth": i % 7}), WAIT).expect("nest");
            assert_eq!(got, json!(i % 7), "call {i}");
        }
        clean(&a);
        clean(&b);
        assert!(a.stats().own_answers > 0, "{:?}", a.stats());
    });
}

/// A request must be read and served while another is still being served, right after
/// activity (followers watching) and after an idle spell (followers asleep).
#[test]
fn a_second_request_is_served_while_a_long_one_holds_its_worker() {
    watchdog(Duration::from_secs(120), || {
        for idle in [Duration::ZERO, Duration::from_millis(60)] {
            for _ in 0..5 {
                let (a, _b, _, rb) = pair();
                assert_eq!(
                    a.call("add", json!({"a": 1}), WAIT).expect("warm"),
                    json!(1)
                );
                std::thread::sleep(idle);
                let held = {
                    let a = a.clone();
                    std::thread::spawn(move || a.call("hold", Value::Null, WAIT))
                };
                // The gate opens only after the short calls are answered: if nobody read them
                // while `hold` is served, this hangs and the watchdog fails the test.
                for i in 0..20u64 {
                    let got = a.call("add", json!({"a": i, "b": 1}), WAIT).expect("add");
                    assert_eq!(got, json!(i + 1));
                }
                rb.open();
                assert_eq!(held.join().expect("holder").expect("held"), json!(true));
            }
        }
    });
}

#[test]
fn a_timed_out_call_cancels_the_long_handler_and_the_connection_goes_on() {
    watchdog(Duration::from_secs(120), || {
        for _ in 0..10 {
            let (a, _b, _, rb) = pair();
            let err = a
                .call("hold", Value::Null, Duration::from_millis(30))
                .expect_err("times out");
            assert!(matches!(err, RpcError::TimedOut { .. }), "{err:?}");
            while !rb.saw_cancel.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            assert_eq!(
                a.call("add", json!({"a": 2, "b": 2}), WAIT)
                    .expect("goes on"),
                json!(4)
            );
        }
    });
}

/// A raw peer that answers `add` and never answers `hang`; it records every line it read.
fn raw_peer() -> (Peer, Arc<Mutex<Vec<Value>>>, std::io::PipeWriter) {
    let (a_read, raw_write) = std::io::pipe().expect("pipe");
    let (raw_read, a_write) = std::io::pipe().expect("pipe");
    let a = connect(
        a_read,
        a_write,
        Relay::default(),
        ConnectionConfig::default(),
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = raw_write.try_clone().expect("clone");
    {
        let seen = Arc::clone(&seen);
        let mut out = raw_write;
        std::thread::spawn(move || {
            for line in BufReader::new(raw_read).lines() {
                let Ok(line) = line else { return };
                let msg: Value = serde_json::from_str(&line).expect("json");
                if msg["method"] == "add" {
                    let reply = json!({"jsonrpc": "2.0", "id": msg["id"], "result": "ok"});
                    if writeln!(out, "{reply}").is_err() {
                        return;
                    }
                }
                seen.lock().expect("seen").push(msg);
            }
        });
    }
    (a, seen, keep)
}

#[test]
fn a_caller_reading_for_itself_times_out_sends_cancel_and_reading_goes_on() {
    watchdog(Duration::from_secs(120), || {
        let (a, seen, _keep) = raw_peer();
        let mut own = 0;
        for round in 0..200 {
            assert_eq!(a.call("add", Value::Null, WAIT).expect("add"), json!("ok"));
            let hang = a.start_call("hang", Value::Null).expect("sent");
            let id = hang.id();
            let err = hang.wait(Duration::from_millis(5)).expect_err("times out");
            assert!(matches!(err, RpcError::TimedOut { .. }), "{err:?}");
            assert_eq!(a.call("add", Value::Null, WAIT).expect("add"), json!("ok"));
            while !seen
                .lock()
                .expect("seen")
                .iter()
                .any(|m| m["method"] == "$/cancel" && m["params"]["id"] == id)
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            own = a.stats().own_answers;
            if round >= 10 && own > 0 {
                break;
            }
        }
        assert!(own > 0, "no caller read for itself");
    });
}

/// A close while the caller polls the pipe itself (the pipe stays open, as when a grandchild
/// holds it) fails the call at once rather than at its timeout.
#[test]
fn closing_the_peer_fails_a_call_whose_caller_reads_the_pipe() {
    watchdog(Duration::from_secs(120), || {
        for _ in 0..20 {
            let (a, _seen, _keep) = raw_peer();
            assert_eq!(a.call("add", Value::Null, WAIT).expect("add"), json!("ok"));
            let hang = a.start_call("hang", Value::Null).expect("sent");
            let closer = {
                let a = a.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(20));
                    a.close();
                })
            };
            let err = hang.wait(Duration::from_secs(600)).expect_err("closed");
            assert!(matches!(err, RpcError::Closed { .. }), "{err:?}");
            closer.join().expect("closer");
        }
    });
}

/// Parked workers look at the reader only while the connection is busy: once it is idle its
/// threads sleep until the peer writes (an idle plugin costs no CPU).
#[test]
fn an_idle_connection_stops_waking_its_threads() {
    watchdog(Duration::from_secs(60), || {
        let (a, b, _, _) = named_pair("idle-a", "idle-b");
        for i in 0..300u64 {
            let (from, method) = if i % 2 == 0 {
                (&a, "nest")
            } else {
                (&b, "back")
            };
            from.call(method, json!({"depth": 3, "a": i}), WAIT)
                .expect("answer");
        }
        // Past the busy window, then count wake-ups over a quiet spell.
        std::thread::sleep(Duration::from_millis(100));
        let before = switches_of("idle-");
        assert!(before > 0, "the connection's threads were not found");
        std::thread::sleep(Duration::from_millis(400));
        let woke = switches_of("idle-").saturating_sub(before);
        // Watching while idle would be one wake-up per worker every 250 µs: well over 1,000.
        assert!(woke < 50, "{woke} wake-ups on an idle connection");
    });
}
