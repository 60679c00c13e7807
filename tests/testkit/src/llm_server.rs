//! A scriptable LLM server on 127.0.0.1 speaking the real OpenAI chat-completions wire protocol
//! (HTTP/1.1, `text/event-stream`, tool calls streamed in fragments). It stands in for a remote
//! paid API; each test queues what the next calls answer and inspects what was asked. Like
//! llama.cpp's server, Ollama and the cloud APIs, it keeps connections alive and frames each
//! answer (a stream included) by its length or as a chunked body.

use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one call answers.
#[derive(Clone, Debug)]
pub enum Script {
    /// Stream these text pieces, `delay` apart.
    Text {
        /// The text, in the pieces it streams as.
        pieces: Vec<String>,
        /// Pause before each piece.
        delay: Duration,
    },
    /// Stream text pieces, but wait for `gate` before sending piece `after`.
    Gated {
        /// The text, in the pieces it streams as.
        pieces: Vec<String>,
        /// Index of the piece that waits for the gate.
        after: usize,
        /// Opened (sent to, or dropped) by the test.
        gate: Receiver<()>,
    },
    /// Stream tool calls (name, arguments JSON) in fragments.
    Tools(Vec<(String, Value)>),
    /// Answer with this status and body.
    Status(u16, String),
    /// Read the request, then send nothing; the test watches for the client closing.
    Silent,
}

impl Script {
    /// Streams `text` word by word, without delay.
    pub fn text(text: &str) -> Self {
        Script::Text {
            pieces: text.split_inclusive(' ').map(str::to_string).collect(),
            delay: Duration::ZERO,
        }
    }
}

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The request path (`/v1/chat/completions`).
    pub path: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Value,
}

#[derive(Default)]
struct State {
    scripts: VecDeque<Script>,
    /// Scripts for the first request whose body contains the key, ahead of the queue.
    keyed: Vec<(String, Script)>,
    seen: Vec<Seen>,
}

/// The running server; its threads live as long as the test process.
pub struct LlmServer {
    /// `http://127.0.0.1:<port>/v1`, what a source's `base_url` is set to.
    pub base_url: String,
    state: Arc<Mutex<State>>,
    closed: Receiver<Instant>,
}

impl LlmServer {
    /// Binds a free loopback port and starts answering.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let base_url = format!("http://{}/v1", listener.local_addr().expect("addr"));
        let state = Arc::new(Mutex::new(State::default()));
        let (closed_tx, closed) = crossbeam_channel::unbounded();
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let state = shared.clone();
                let closed_tx = closed_tx.clone();
                std::thread::spawn(move || serve(stream, &state, &closed_tx));
            }
        });
        Self {
            base_url,
            state,
            closed,
        }
    }

    /// Queues what the next call answers.
    pub fn push(&self, script: Script) {
        self.state.lock().scripts.push_back(script);
    }

    /// Queues what the first call whose request body contains `marker` answers, whenever it
    /// comes: for a call the daemon makes on its own clock (a consolidation task) between
    /// the calls the test drives.
    pub fn push_for(&self, marker: &str, script: Script) {
        self.state.lock().keyed.push((marker.to_owned(), script));
    }

    /// Every request received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().seen.clone()
    }

    /// Waits until the server has received `n` requests.
    pub fn wait_requests(&self, n: usize, limit: Duration) -> Vec<Seen> {
        let deadline = Instant::now() + limit;
        loop {
            let seen = self.seen();
            if seen.len() >= n {
                return seen;
            }
            assert!(
                Instant::now() < deadline,
                "server saw {} requests, wanted {n}",
                seen.len()
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// When a silent call's client closed the connection.
    pub fn closed_at(&self, limit: Duration) -> Instant {
        self.closed
            .recv_timeout(limit)
            .expect("the client closed the silent connection")
    }
}

/// Answers requests on one connection until the client closes it or an answer cannot be
/// written.
fn serve(stream: TcpStream, state: &Mutex<State>, closed: &Sender<Instant>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut out = stream;
    while serve_one(&mut reader, &mut out, state, closed) {}
}

/// Reads one request and answers it; whether the connection can take another.
fn serve_one(
    reader: &mut BufReader<TcpStream>,
    out: &mut TcpStream,
    state: &Mutex<State>,
    closed: &Sender<Instant>,
) -> bool {
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return false;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.trim_end().split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
            headers.push((k.to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return false;
    }
    if path.ends_with("/models") {
        return respond(
            out,
            200,
            "application/json",
            &json!({"data": [{"id": "test-model"}]}).to_string(),
        )
        .is_ok();
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let script = {
        let mut s = state.lock();
        let text = body.to_string();
        let keyed = s
            .keyed
            .iter()
            .position(|(marker, _)| text.contains(marker.as_str()));
        s.seen.push(Seen {
            path,
            headers,
            body,
        });
        match keyed {
            Some(i) => s.keyed.remove(i).1,
            None => s
                .scripts
                .pop_front()
                .unwrap_or_else(|| Script::text("default answer")),
        }
    };
    let sent = match script {
        Script::Status(code, text) => respond(out, code, "application/json", &text),
        Script::Silent => {
            let mut buf = [0u8; 64];
            // Blocks until the client shuts its side down.
            while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
            let _ = closed.send(Instant::now());
            return false;
        }
        Script::Text { pieces, delay } => stream_text(out, &pieces, delay, None),
        Script::Gated {
            pieces,
            after,
            gate,
        } => stream_text(out, &pieces, Duration::ZERO, Some((after, gate))),
        Script::Tools(calls) => stream_tools(out, &calls),
    };
    sent.is_ok()
}

fn respond(out: &mut TcpStream, code: u16, kind: &str, body: &str) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 {code} X\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn sse_head(out: &mut TcpStream) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
    )?;
    out.flush()
}

/// One event as one chunk of the body, sent at once.
fn event(out: &mut TcpStream, data: &Value) -> std::io::Result<()> {
    raw_event(out, &format!("data: {data}\n\n"))
}

fn raw_event(out: &mut TcpStream, text: &str) -> std::io::Result<()> {
    write!(out, "{:x}\r\n{text}\r\n", text.len())?;
    out.flush()
}

/// `[DONE]`, then the end of the chunked body.
fn done(out: &mut TcpStream) -> std::io::Result<()> {
    raw_event(out, "data: [DONE]\n\n")?;
    out.write_all(b"0\r\n\r\n")?;
    out.flush()
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "test-model",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn stream_text(
    out: &mut TcpStream,
    pieces: &[String],
    delay: Duration,
    gate: Option<(usize, Receiver<()>)>,
) -> std::io::Result<()> {
    sse_head(out)?;
    event(
        out,
        &chunk(json!({"role": "assistant", "content": null}), None),
    )?;
    for (i, piece) in pieces.iter().enumerate() {
        if let Some((after, gate)) = &gate
            && i == *after
        {
            let _ = gate.recv_timeout(Duration::from_secs(30));
        }
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        event(out, &chunk(json!({"content": piece}), None))?;
    }
    event(out, &chunk(json!({}), Some("stop")))?;
    event(
        out,
        &json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
                       "usage": {"prompt_tokens": 10, "completion_tokens": pieces.len(), "total_tokens": 10 + pieces.len()}}),
    )?;
    done(out)
}

fn stream_tools(out: &mut TcpStream, calls: &[(String, Value)]) -> std::io::Result<()> {
    sse_head(out)?;
    event(
        out,
        &chunk(json!({"role": "assistant", "content": null}), None),
    )?;
    for (i, (name, args)) in calls.iter().enumerate() {
        let text = args.to_string();
        let (a, b) = text.split_at(text.len() / 2);
        event(
            out,
            &chunk(
                json!({"tool_calls": [{"index": i, "id": format!("call_{i}"), "type": "function",
                                                 "function": {"name": name, "arguments": a}}]}),
                None,
            ),
        )?;
        event(
            out,
            &chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": b}}]}),
                None,
            ),
        )?;
    }
    event(out, &chunk(json!({}), Some("tool_calls")))?;
    done(out)
}
