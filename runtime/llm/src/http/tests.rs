//! The client against real sockets: a `TcpListener` on 127.0.0.1 in a thread speaking plain
//! HTTP/1.1 (chunked event streams included). Every test runs under a watchdog.

use super::*;
use hearth_engine::CancelToken;
use hearth_testkit::within as watchdog;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The stop budget (DESIGN §5): cancel → call returned and connection closed.
pub(super) const STOP_BUDGET: Duration = Duration::from_millis(50);

/// Binds a listener and hands it to `script` on a server thread; returns `http://127.0.0.1:port`.
pub(super) fn serve(script: impl FnOnce(TcpListener) + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    thread::spawn(move || script(listener));
    url
}

pub(super) struct Received {
    pub(super) head: String,
    pub(super) body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Accepts one connection and reads one request (head, then a `Content-Length` body).
pub(super) fn accept_request(listener: &TcpListener) -> (TcpStream, Received) {
    let (mut stream, _) = listener.accept().expect("accept");
    let received = read_request(&mut stream).expect("a request");
    (stream, received)
}

/// Reads the next request on `stream`; `None` when the client closed it first.
pub(super) fn read_request(stream: &mut TcpStream) -> Option<Received> {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(0) if raw.is_empty() => return None,
            Ok(0) => panic!("the client closed in the middle of a request head"),
            Ok(_) => raw.push(byte[0]),
            Err(e) => panic!("request head: {e}"),
        }
    }
    let head = String::from_utf8(raw).expect("utf-8 head");
    let mut received = Received {
        head,
        body: Vec::new(),
    };
    let length: usize = received
        .header("content-length")
        .map_or(0, |v| v.parse().expect("len"));
    received.body = vec![0; length];
    stream.read_exact(&mut received.body).expect("request body");
    Some(received)
}

pub(super) fn write_chunk(stream: &mut TcpStream, data: &str) {
    write!(stream, "{:x}\r\n{data}\r\n", data.len()).expect("chunk");
    stream.flush().expect("flush");
}

pub(super) const SSE_HEAD: &str = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                        Transfer-Encoding: chunked\r\n\r\n";

/// Blocks until the peer closes (or 5 s pass); returns when that was seen and whether it was a
/// close rather than the timeout.
pub(super) fn await_close(stream: &mut TcpStream) -> (Instant, bool) {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let mut buf = [0u8; 64];
    let result = stream.read(&mut buf);
    let at = Instant::now();
    let closed = match result {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ),
    };
    (at, closed)
}

/// Whether another connection is waiting on `listener` (i.e. the client tried again).
fn has_pending_connection(listener: &TcpListener) -> bool {
    listener.set_nonblocking(true).expect("nonblocking");
    !matches!(listener.accept(), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
}

/// Posts `{}` as JSON to `url` with a token that never fires.
pub(super) fn post_empty(
    client: &HttpClient,
    url: &str,
    opts: RequestOptions,
) -> Result<HttpResponse, HttpError> {
    client.post(
        url,
        &json_headers(),
        b"{}".to_vec(),
        &CancelToken::new(),
        opts,
    )
}

pub(super) fn json_headers() -> Vec<(String, String)> {
    vec![("Content-Type".to_owned(), "application/json".to_owned())]
}

#[test]
fn post_reaches_the_server_intact_and_returns_status_headers_and_body() {
    watchdog(Duration::from_secs(10), || {
        let (seen_tx, seen_rx) = mpsc::channel();
        let url = serve(move |listener| {
            let (mut stream, received) = accept_request(&listener);
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nX-Reply: yes\r\nContent-Length: 5\r\n\r\nhello")
                .expect("reply");
            seen_tx.send(received).expect("report");
        });
        let body = "{\"messages\":[{\"content\":\"你好 \\u0000 ok\"}]}"
            .as_bytes()
            .to_vec();
        let headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Authorization".to_owned(), "Bearer sk-test".to_owned()),
            ("X-Test".to_owned(), "abc".to_owned()),
        ];
        let response = HttpClient::new()
            .post(
                &format!("{url}/v1/chat/completions"),
                &headers,
                body.clone(),
                &CancelToken::new(),
                RequestOptions::non_streaming(),
            )
            .expect("post");
        assert_eq!(response.status, 200);
        assert!(response.is_success());
        assert_eq!(response.header("x-reply"), Some("yes"));
        assert_eq!(response.read_text(1024).expect("body"), "hello");

        let received = seen_rx
            .recv_timeout(Duration::from_secs(5))
            .expect("request seen");
        assert!(
            received
                .head
                .starts_with("POST /v1/chat/completions HTTP/1.1\r\n")
        );
        assert_eq!(received.header("content-type"), Some("application/json"));
        assert_eq!(received.header("authorization"), Some("Bearer sk-test"));
        assert_eq!(received.header("x-test"), Some("abc"));
        assert_eq!(
            received.header("content-length"),
            Some(body.len().to_string().as_str())
        );
        assert_eq!(received.body, body);
    });
}

#[test]
fn an_error_status_is_a_response_not_an_error() {
    watchdog(Duration::from_secs(10), || {
        let url = serve(|listener| {
            let (mut stream, _) = accept_request(&listener);
            stream
                .write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nboom")
                .expect("reply");
        });
        let response = post_empty(&HttpClient::new(), &url, RequestOptions::non_streaming())
            .expect("a 500 is still a response");
        assert_eq!(response.status, 500);
        assert!(!response.is_success());
        assert_eq!(
            response
                .error_for_status(1024)
                .expect_err("500 is not success"),
            HttpError::Status {
                status: 500,
                body: "boom".to_owned()
            }
        );
    });
}

#[test]
fn the_first_event_arrives_before_the_server_sends_the_rest() {
    watchdog(Duration::from_secs(15), || {
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let (released_tx, released_rx) = mpsc::channel();
        let url = serve(move |listener| {
            let (mut stream, _) = accept_request(&listener);
            stream.write_all(SSE_HEAD.as_bytes()).expect("head");
            write_chunk(&mut stream, "data: one\n\n");
            // Hold the rest back until the client shows it already has the first event.
            let by_client = go_rx.recv_timeout(Duration::from_secs(5)).is_ok();
            released_tx.send(by_client).expect("report");
            write_chunk(&mut stream, ": keep-alive\n\nevent: delta\ndata: two\n\n");
            write_chunk(&mut stream, "data: [DONE]\n\n");
            write_chunk(&mut stream, "");
        });
        let response =
            post_empty(&HttpClient::new(), &url, RequestOptions::streaming()).expect("post");
        assert_eq!(response.header("content-type"), Some("text/event-stream"));
        let mut events = response.into_sse();
        let first = events.next().expect("an item").expect("first event");
        assert_eq!(
            first,
            SseItem::Event(SseEvent {
                event: None,
                data: "one".to_owned()
            })
        );
        go_tx.send(()).expect("release");
        let rest: Vec<SseItem> = events
            .collect::<Result<_, _>>()
            .expect("rest of the stream");
        assert_eq!(
            rest,
            vec![
                SseItem::Event(SseEvent {
                    event: Some("delta".to_owned()),
                    data: "two".to_owned()
                }),
                SseItem::Done,
            ]
        );
        assert!(
            released_rx
                .recv_timeout(Duration::from_secs(5))
                .expect("server report"),
            "the client only got the first event after the server sent the rest"
        );
    });
}

/// What a cancelled call looked like from both ends, measured from the moment of `cancel()`.
struct CancelTiming {
    client_lag: Duration,
    server_lag: Duration,
    server_saw_close: bool,
    retried: bool,
}

fn assert_within_budget(what: &str, t: &CancelTiming) {
    assert!(
        t.client_lag < STOP_BUDGET,
        "{what}: call returned {:?} after cancel",
        t.client_lag
    );
    assert!(
        t.server_saw_close,
        "{what}: the server never saw the connection close"
    );
    assert!(
        t.server_lag < STOP_BUDGET,
        "{what}: server saw the close {:?} after cancel",
        t.server_lag
    );
    assert!(
        !t.retried,
        "{what}: the client connected again after a cancel"
    );
}

/// Runs one call against a server that goes silent at `silent_after` and cancels it while the
/// client is blocked. `client` performs the call and reports readiness (if it has a phase to
/// wait for) before blocking.
fn cancel_while_blocked(
    server_phase: impl FnOnce(&mut TcpStream) + Send + 'static,
    client: impl FnOnce(String, CancelToken, mpsc::Sender<()>) -> Result<(), HttpError> + Send + 'static,
) -> CancelTiming {
    let (ready_tx, ready_rx) = mpsc::channel();
    let (close_tx, close_rx) = mpsc::channel();
    let server_ready = ready_tx.clone();
    let url = serve(move |listener| {
        let (mut stream, _) = accept_request(&listener);
        server_phase(&mut stream);
        server_ready.send(()).expect("ready");
        let (at, closed) = await_close(&mut stream);
        thread::sleep(Duration::from_millis(100));
        let retried = has_pending_connection(&listener);
        close_tx.send((at, closed, retried)).expect("report");
    });
    let cancel = CancelToken::new();
    let (done_tx, done_rx) = mpsc::channel();
    let token = cancel.clone();
    thread::spawn(move || {
        let result = client(url, token, ready_tx);
        done_tx.send((result, Instant::now())).expect("report");
    });
    // The server has gone silent, and the client (if it reports) is about to block.
    ready_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("server ready");
    ready_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("client ready");
    thread::sleep(Duration::from_millis(30));
    let cancelled_at = Instant::now();
    cancel.cancel();
    let (result, returned_at) = done_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("call returned");
    assert_eq!(result, Err(HttpError::Cancelled));
    let (closed_at, server_saw_close, retried) = close_rx
        .recv_timeout(Duration::from_secs(6))
        .expect("server report");
    CancelTiming {
        client_lag: returned_at.saturating_duration_since(cancelled_at),
        server_lag: closed_at.saturating_duration_since(cancelled_at),
        server_saw_close,
        retried,
    }
}

#[test]
fn cancel_while_the_server_is_silent_returns_and_closes_within_50ms() {
    watchdog(Duration::from_secs(20), || {
        for round in 0..4 {
            // Request read, then nothing at all: a model still prefilling.
            let timing = cancel_while_blocked(
                |_| {},
                |url, cancel, ready| {
                    ready.send(()).expect("ready");
                    HttpClient::new()
                        .post(
                            &url,
                            &json_headers(),
                            b"{}".to_vec(),
                            &cancel,
                            RequestOptions::streaming(),
                        )
                        .map(|_| ())
                },
            );
            assert_within_budget(&format!("silent server, round {round}"), &timing);
        }
    });
}

#[test]
fn cancel_between_body_chunks_returns_and_closes_within_50ms() {
    watchdog(Duration::from_secs(20), || {
        for round in 0..3 {
            let timing = cancel_while_blocked(
                |stream| {
                    stream.write_all(SSE_HEAD.as_bytes()).expect("head");
                    write_chunk(stream, "data: one\n\n");
                },
                |url, cancel, ready| {
                    let response = HttpClient::new().post(
                        &url,
                        &json_headers(),
                        b"{}".to_vec(),
                        &cancel,
                        RequestOptions::streaming(),
                    )?;
                    let mut events = response.into_sse();
                    let first = events.next().expect("an item")?;
                    assert_eq!(
                        first,
                        SseItem::Event(SseEvent {
                            event: None,
                            data: "one".into()
                        })
                    );
                    ready.send(()).expect("ready");
                    match events.next() {
                        Some(Err(e)) => Err(e),
                        other => panic!("expected the blocked read to fail, got {other:?}"),
                    }
                },
            );
            assert_within_budget(&format!("streaming body, round {round}"), &timing);
        }
    });
}

#[test]
fn cancel_during_the_tls_handshake_returns_and_closes_within_50ms() {
    watchdog(Duration::from_secs(15), || {
        let (ready_tx, ready_rx) = mpsc::channel();
        let (close_tx, close_rx) = mpsc::channel();
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("https://{}/", listener.local_addr().expect("addr"));
        thread::spawn(move || {
            // Take the ClientHello and never answer it.
            let (mut stream, _) = listener.accept().expect("accept");
            let mut header = [0u8; 5];
            stream.read_exact(&mut header).expect("record header");
            assert_eq!(header[0], 0x16, "a TLS handshake record");
            let mut hello = vec![0u8; usize::from(u16::from_be_bytes([header[3], header[4]]))];
            stream.read_exact(&mut hello).expect("client hello");
            ready_tx.send(()).expect("ready");
            close_tx.send(await_close(&mut stream)).expect("report");
        });
        stop_in_flight(HttpClient::new(), url, &close_rx, || {
            ready_rx
                .recv_timeout(Duration::from_secs(5))
                .expect("handshake started");
            thread::sleep(Duration::from_millis(30));
        });
    });
}

/// Posts `url` with `client` on another thread, cancels the call once `ready` returns, and
/// asserts that the call returned [`HttpError::Cancelled`] and that the server, reporting on
/// `closed`, saw the connection close, both within the stop budget.
pub(super) fn stop_in_flight(
    client: HttpClient,
    url: String,
    closed: &mpsc::Receiver<(Instant, bool)>,
    ready: impl FnOnce(),
) {
    let cancel = CancelToken::new();
    let token = cancel.clone();
    let (done_tx, done_rx) = mpsc::channel();
    thread::spawn(move || {
        let result = client.post(
            &url,
            &json_headers(),
            b"{}".to_vec(),
            &token,
            RequestOptions::streaming(),
        );
        done_tx
            .send((result.map(|_| ()), Instant::now()))
            .expect("report");
    });
    ready();
    let cancelled_at = Instant::now();
    cancel.cancel();
    let (result, returned_at) = done_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("returned");
    assert_eq!(result, Err(HttpError::Cancelled));
    let lag = returned_at.saturating_duration_since(cancelled_at);
    assert!(lag < STOP_BUDGET, "returned {lag:?} after cancel");
    let (closed_at, was_closed) = closed.recv_timeout(Duration::from_secs(6)).expect("server");
    assert!(was_closed, "the server never saw the close");
    let lag = closed_at.saturating_duration_since(cancelled_at);
    assert!(
        lag < STOP_BUDGET,
        "server saw the close {lag:?} after cancel"
    );
}

#[test]
fn https_to_a_plain_http_server_is_a_tls_error() {
    watchdog(Duration::from_secs(10), || {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("https://{}/", listener.local_addr().expect("addr"));
        thread::spawn(move || {
            let (mut stream, _) = listener.accept().expect("accept");
            let mut hello = [0u8; 5];
            let _ = stream.read_exact(&mut hello);
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        });
        let result = HttpClient::new().post(
            &url,
            &[],
            Vec::new(),
            &CancelToken::new(),
            RequestOptions::streaming(),
        );
        assert!(matches!(result, Err(HttpError::Tls(_))), "{result:?}");
    });
}

#[test]
fn a_call_cancelled_before_it_starts_never_connects() {
    watchdog(Duration::from_secs(10), || {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/", listener.local_addr().expect("addr"));
        let cancel = CancelToken::new();
        cancel.cancel();
        let started = Instant::now();
        let result = HttpClient::new().post(
            &url,
            &json_headers(),
            b"{}".to_vec(),
            &cancel,
            RequestOptions::streaming(),
        );
        assert_eq!(result.map(|_| ()), Err(HttpError::Cancelled));
        assert!(started.elapsed() < STOP_BUDGET);
        thread::sleep(Duration::from_millis(50));
        assert!(
            !has_pending_connection(&listener),
            "a cancelled call connected"
        );
    });
}

#[test]
fn a_closed_port_is_a_quick_connect_error() {
    watchdog(Duration::from_secs(10), || {
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port();
        let started = Instant::now();
        let result = HttpClient::new().post(
            &format!("http://127.0.0.1:{port}/"),
            &json_headers(),
            b"{}".to_vec(),
            &CancelToken::new(),
            RequestOptions::streaming(),
        );
        assert!(matches!(result, Err(HttpError::Connect(_))), "{result:?}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "took {:?}",
            started.elapsed()
        );
    });
}

#[test]
fn the_total_timeout_ends_a_silent_non_streaming_call() {
    watchdog(Duration::from_secs(10), || {
        let url = serve(|listener| {
            let (mut stream, _) = accept_request(&listener);
            let _ = await_close(&mut stream);
        });
        let opts = RequestOptions {
            total_timeout: Some(Duration::from_millis(300)),
            stream: None,
        };
        let started = Instant::now();
        let result = HttpClient::new().post(
            &url,
            &json_headers(),
            b"{}".to_vec(),
            &CancelToken::new(),
            opts,
        );
        let took = started.elapsed();
        assert!(matches!(result, Err(HttpError::Timeout(_))), "{result:?}");
        assert!(
            took >= Duration::from_millis(250) && took < Duration::from_secs(3),
            "took {took:?}"
        );
    });
}

#[test]
fn reading_a_whole_body_respects_the_cap() {
    watchdog(Duration::from_secs(10), || {
        let fetch = |limit: usize| {
            let url = serve(|listener| {
                let (mut stream, _) = accept_request(&listener);
                let body = "x".repeat(1000);
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{body}"
                )
                .expect("reply");
            });
            HttpClient::new()
                .get(
                    &url,
                    &[],
                    &CancelToken::new(),
                    RequestOptions::non_streaming(),
                )
                .expect("get")
                .read_body(limit)
        };
        assert_eq!(fetch(1000).expect("exactly the cap").len(), 1000);
        assert_eq!(fetch(999), Err(HttpError::TooLarge { limit: 999 }));
    });
}

#[test]
fn ndjson_streams_over_http() {
    watchdog(Duration::from_secs(10), || {
        let url = serve(|listener| {
            let (mut stream, _) = accept_request(&listener);
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n")
                .expect("head");
            write_chunk(
                &mut stream,
                "{\"message\":{\"content\":\"he\"},\"done\":false}\n{\"mess",
            );
            write_chunk(
                &mut stream,
                "age\":{\"content\":\"llo\"},\"done\":false}\n\n",
            );
            write_chunk(&mut stream, "{\"done\":true}\n");
            write_chunk(&mut stream, "");
        });
        let response =
            post_empty(&HttpClient::new(), &url, RequestOptions::streaming()).expect("post");
        let mut lines = response.into_ndjson();
        let mut content = String::new();
        let mut done = false;
        while let Some(value) = lines.next_value().expect("valid json lines") {
            if let Some(text) = value.pointer("/message/content").and_then(|v| v.as_str()) {
                content.push_str(text);
            }
            done = value["done"] == serde_json::Value::Bool(true);
        }
        assert_eq!(content, "hello");
        assert!(done);
    });
}

#[test]
fn a_host_name_is_resolved_and_each_address_tried() {
    watchdog(Duration::from_secs(10), || {
        let url = serve(|listener| {
            let (mut stream, received) = accept_request(&listener);
            assert!(received.head.starts_with("GET /api/tags HTTP/1.1\r\n"));
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                .expect("reply");
        });
        // `localhost` may resolve to ::1 first, where nothing listens: the next address must
        // still be tried.
        let url = url.replace("127.0.0.1", "localhost");
        let response = HttpClient::new()
            .get(
                &format!("{url}/api/tags"),
                &[],
                &CancelToken::new(),
                RequestOptions::non_streaming(),
            )
            .expect("get");
        assert_eq!(response.read_text(16).expect("body"), "{}");
    });
}

#[test]
fn cancel_stops_delivering_bytes_already_buffered() {
    watchdog(Duration::from_secs(10), || {
        let url = serve(|listener| {
            let (mut stream, _) = accept_request(&listener);
            stream.write_all(SSE_HEAD.as_bytes()).expect("head");
            write_chunk(&mut stream, "data: one\n\ndata: two\n\n");
            let _ = await_close(&mut stream);
        });
        let cancel = CancelToken::new();
        let response = HttpClient::new()
            .post(
                &url,
                &json_headers(),
                b"{}".to_vec(),
                &cancel,
                RequestOptions::streaming(),
            )
            .expect("post");
        let mut events = response.into_sse();
        assert!(matches!(events.next(), Some(Ok(SseItem::Event(_)))));
        // "two" is already in the client's buffer; after the cancel it must not surface.
        cancel.cancel();
        assert_eq!(events.next(), Some(Err(HttpError::Cancelled)));
        assert_eq!(events.next(), None);
    });
}

#[test]
fn bad_urls_are_rejected_before_any_io() {
    let client = HttpClient::new();
    for url in ["ftp://example.invalid/", "not a url", "/relative/path"] {
        let result = client.post(
            url,
            &[],
            Vec::new(),
            &CancelToken::new(),
            RequestOptions::streaming(),
        );
        assert!(
            matches!(result, Err(HttpError::InvalidUrl(_))),
            "{url}: {result:?}"
        );
    }
}

#[test]
fn client_and_response_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<HttpClient>();
    send::<HttpResponse>();
    send::<SseReader<ResponseBody>>();
}
