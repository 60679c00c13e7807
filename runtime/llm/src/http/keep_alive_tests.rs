//! Kept-alive connections against a real HTTP/1.1 server on 127.0.0.1 that serves many requests
//! per connection: reuse, the binding of a reused connection to its new call (cancel token and
//! stream limits), and the one retry when the server closed an idle connection.

use super::tests::{
    Received, SSE_HEAD, await_close, json_headers, post_empty, read_request, serve, stop_in_flight,
    write_chunk,
};
use super::*;
use hearth_engine::CancelToken;
use hearth_testkit::within as watchdog;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// What the server does with one request: the connection's number (from 0), the request's
/// number on that connection (from 0), the socket and the request.
type Answer = dyn Fn(usize, usize, &mut TcpStream, Received) -> Keep + Send + Sync;

/// Whether the server goes on reading requests on the connection.
#[derive(PartialEq)]
enum Keep {
    Open,
    Close,
}

/// A server that answers requests on each connection until `answer` closes it or the client
/// does; returns its URL and the count of connections it accepted.
fn keep_alive_server(
    answer: impl Fn(usize, usize, &mut TcpStream, Received) -> Keep + Send + Sync + 'static,
) -> (String, Arc<AtomicUsize>) {
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    let answer: Arc<Answer> = Arc::new(answer);
    let url = serve(move |listener| {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let conn = count.fetch_add(1, Ordering::SeqCst);
            let answer = answer.clone();
            thread::spawn(move || {
                for n in 0.. {
                    let Some(request) = read_request(&mut stream) else {
                        return;
                    };
                    if answer(conn, n, &mut stream, request) == Keep::Close {
                        return;
                    }
                }
            });
        }
    });
    (url, accepted)
}

fn reply(stream: &mut TcpStream, body: &str) {
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("reply");
}

/// A server answering each connection's first request with "first" and handing every later
/// one (its number, the socket) to `then`.
fn after_first(
    then: impl Fn(usize, &mut TcpStream) -> Keep + Send + Sync + 'static,
) -> (String, Arc<AtomicUsize>) {
    keep_alive_server(move |_, n, stream, _| {
        if n == 0 {
            reply(stream, "first");
            return Keep::Open;
        }
        then(n, stream)
    })
}

/// The call to an [`after_first`] server that leaves its connection kept, made under `opts`.
fn first_call(client: &HttpClient, url: &str, opts: RequestOptions) {
    let first = post(client, url, &CancelToken::new(), opts);
    assert_eq!(first.read_text(64).expect("body"), "first");
}

fn post(
    client: &HttpClient,
    url: &str,
    cancel: &CancelToken,
    opts: RequestOptions,
) -> HttpResponse {
    client
        .post(url, &json_headers(), b"{}".to_vec(), cancel, opts)
        .expect("post")
}

fn limits(idle_ms: u64) -> RequestOptions {
    RequestOptions::streaming_within(StreamTimeouts {
        first_byte: Duration::from_secs(5),
        idle: Duration::from_millis(idle_ms),
        total: Duration::from_secs(30),
    })
}

#[test]
fn answers_read_to_their_end_leave_the_connection_for_the_next_calls() {
    watchdog(Duration::from_secs(10), || {
        let (url, accepted) = keep_alive_server(|_, n, stream, _| {
            if n == 1 {
                // A streamed answer: its end marker, then the end of the chunked body.
                stream.write_all(SSE_HEAD.as_bytes()).expect("head");
                write_chunk(stream, "data: {\"n\":1}\n\n");
                write_chunk(stream, "data: [DONE]\n\n");
                stream.write_all(b"0\r\n\r\n").expect("end");
            } else if n == 3 {
                // Longer than the body's read buffer, so a caller's early drop leaves it unread.
                reply(stream, &"x".repeat(100_000));
            } else {
                reply(stream, &format!("answer {n}"));
            }
            Keep::Open
        });
        let client = HttpClient::new();
        let cancel = CancelToken::new();
        let first = post(&client, &url, &cancel, RequestOptions::non_streaming());
        assert_eq!(first.read_text(64).expect("body"), "answer 0");

        let streamed = post(&client, &url, &cancel, limits(5_000));
        let progress = streamed.progress();
        let mut events = streamed.into_sse();
        assert!(matches!(events.next_item(), Ok(Some(SseItem::Event(_)))));
        assert_eq!(events.next_item().expect("done"), Some(SseItem::Done));
        assert!(progress.end_within(Duration::from_millis(500)));
        assert!(events.ends_here(), "the chunked body ends behind [DONE]");
        drop(events);

        let third = post(&client, &url, &cancel, RequestOptions::non_streaming());
        assert_eq!(third.read_text(64).expect("body"), "answer 2");
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "one connection for three calls"
        );

        // A body dropped before its end takes its connection with it.
        reply_then_drop_early(&client, &url);
        let fifth = post(&client, &url, &cancel, RequestOptions::non_streaming());
        assert_eq!(fifth.read_text(64).expect("body"), "answer 0");
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    });
}

fn reply_then_drop_early(client: &HttpClient, url: &str) {
    let mut early = post(
        client,
        url,
        &CancelToken::new(),
        RequestOptions::non_streaming(),
    );
    let mut first_byte = [0u8; 1];
    early.body.read_exact(&mut first_byte).expect("one byte");
}

#[test]
fn a_late_stop_of_a_finished_call_leaves_the_call_now_on_its_connection_alone() {
    watchdog(Duration::from_secs(10), || {
        let (second_started, started_rx) = mpsc::channel();
        let (go_on, go_rx) = mpsc::channel::<()>();
        let go_rx = std::sync::Mutex::new(go_rx);
        let (url, accepted) = after_first(move |_, stream| {
            stream.write_all(SSE_HEAD.as_bytes()).expect("head");
            write_chunk(stream, "data: {\"n\":1}\n\n");
            second_started.send(()).expect("report");
            go_rx
                .lock()
                .expect("lock")
                .recv_timeout(Duration::from_secs(5))
                .expect("go on");
            write_chunk(stream, "data: {\"n\":2}\n\n");
            write_chunk(stream, "data: [DONE]\n\n");
            stream.write_all(b"0\r\n\r\n").expect("end");
            Keep::Open
        });
        let client = HttpClient::new();
        let first_call = CancelToken::new();
        // Read to its end but still held: the connection is back in the pool, and the call's
        // body (with its binding) is alive when the late stop comes.
        let mut first = post(&client, &url, &first_call, RequestOptions::non_streaming());
        let mut text = String::new();
        first.body.read_to_string(&mut text).expect("first body");
        assert_eq!(text, "first");

        let second_call = CancelToken::new();
        let second = post(&client, &url, &second_call, limits(5_000));
        let mut events = second.into_sse();
        assert!(matches!(events.next_item(), Ok(Some(SseItem::Event(_)))));
        started_rx
            .recv_timeout(Duration::from_secs(5))
            .expect("second call under way");
        first_call.cancel();
        go_on.send(()).expect("go on");
        assert!(
            matches!(events.next_item(), Ok(Some(SseItem::Event(_)))),
            "the stop of the first call broke the second"
        );
        assert_eq!(events.next_item().expect("done"), Some(SseItem::Done));
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "the second call reused the connection"
        );
        drop(first);
    });
}

#[test]
fn a_stop_reaches_a_call_on_a_kept_connection_within_50ms() {
    watchdog(Duration::from_secs(10), || {
        let (closed_tx, closed_rx) = mpsc::channel();
        let (url, accepted) = after_first(move |_, stream| {
            // The second request is read, then nothing: a model still prefilling.
            closed_tx.send(await_close(stream)).expect("report");
            Keep::Close
        });
        let client = HttpClient::new();
        first_call(&client, &url, RequestOptions::non_streaming());

        // The second request is on the server, which says nothing: stop it there.
        stop_in_flight(client, url, &closed_rx, || {
            thread::sleep(Duration::from_millis(100));
        });
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "the stopped call ran on the kept one"
        );
    });
}

#[test]
fn a_kept_connection_reads_under_the_next_calls_stream_limits() {
    watchdog(Duration::from_secs(10), || {
        let (url, accepted) = after_first(|_, stream| {
            stream.write_all(SSE_HEAD.as_bytes()).expect("head");
            write_chunk(stream, "data: {\"n\":1}\n\n");
            // Then silence, past the second call's idle limit.
            let _ = await_close(stream);
            Keep::Close
        });
        let client = HttpClient::new();
        // The first call has no stream limits at all.
        first_call(&client, &url, RequestOptions::streaming());

        let started = Instant::now();
        let second = post(&client, &url, &CancelToken::new(), limits(200));
        let progress = second.progress();
        let mut events = second.into_sse();
        assert!(matches!(events.next_item(), Ok(Some(SseItem::Event(_)))));
        progress.mark();
        let err = events.next_item().expect_err("idle limit");
        assert!(matches!(err, HttpError::Timeout(_)), "{err}");
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(2),
            "the idle limit fired after {took:?}"
        );
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn a_connection_the_server_closed_while_idle_costs_no_error() {
    watchdog(Duration::from_secs(10), || {
        // Connection 0: answers once, then reads the next request and closes without an answer,
        // as a server does whose idle close crosses the request. Later connections answer.
        let (url, accepted) = keep_alive_server(|conn, n, stream, _| {
            if conn == 0 && n == 1 {
                return Keep::Close;
            }
            reply(stream, &format!("conn {conn}"));
            Keep::Open
        });
        let client = HttpClient::new();
        let cancel = CancelToken::new();
        let first = post(&client, &url, &cancel, RequestOptions::non_streaming());
        assert_eq!(first.read_text(64).expect("body"), "conn 0");
        let second = post(&client, &url, &cancel, RequestOptions::non_streaming());
        assert_eq!(
            second.read_text(64).expect("body"),
            "conn 1",
            "sent again on a new one"
        );
        assert_eq!(accepted.load(Ordering::SeqCst), 2);

        // A server that closed the idle connection before the next call: the probe sees it.
        let (url, accepted) = keep_alive_server(|_, _, stream, _| {
            reply(stream, "once");
            Keep::Close
        });
        for _ in 0..2 {
            let answer = post(&client, &url, &cancel, RequestOptions::non_streaming());
            assert_eq!(answer.read_text(64).expect("body"), "once");
            thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn a_fresh_connection_that_fails_is_an_error_and_is_not_sent_again() {
    watchdog(Duration::from_secs(10), || {
        let (url, accepted) = keep_alive_server(|_, _, _, _| Keep::Close);
        let err = post_empty(&HttpClient::new(), &url, RequestOptions::non_streaming())
            .expect_err("no answer");
        assert!(
            matches!(err, HttpError::Io(_) | HttpError::Protocol(_)),
            "{err}"
        );
        thread::sleep(Duration::from_millis(100));
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "sent once only");
    });
}
