//! A raw HTTP/1.1 client of the web plugin's page API, as the page's own wire path uses it:
//! `POST /api/chat`, then the answer's server-sent events on `GET /api/chat/{id}/events`.
//! Programs authenticate with the API key (`Authorization: Bearer`), which needs no CSRF token.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// How long any read may stall before the bench fails instead of hanging.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// The web plugin on `127.0.0.1:port`, called with API key `key`.
pub struct WebClient {
    port: u16,
    key: String,
}

impl WebClient {
    /// A client of the web plugin at `127.0.0.1:port`, authorised by `key`.
    pub fn new(port: u16, key: &str) -> Self {
        Self {
            port,
            key: key.to_owned(),
        }
    }

    /// Waits until the plugin accepts connections (it starts after the daemon's socket).
    pub fn wait_up(&self, within: Duration) {
        let deadline = Instant::now() + within;
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "the web plugin never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn send(&self, method: &str, path: &str, body: &str) -> TcpStream {
        let mut s =
            TcpStream::connect(("127.0.0.1", self.port)).expect("connect to the web plugin");
        s.set_read_timeout(Some(READ_TIMEOUT)).expect("timeout");
        s.set_nodelay(true).expect("nodelay");
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             Authorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.key,
            body.len()
        );
        s.write_all(req.as_bytes()).expect("write request");
        s
    }

    /// The whole response to `GET path`, head and body, as it came off the wire.
    pub fn get_raw(&self, path: &str) -> Vec<u8> {
        let mut raw = Vec::new();
        self.send("GET", path, "")
            .read_to_end(&mut raw)
            .expect("read response");
        raw
    }

    /// Submits `text` on the page's chat route; the answer's request id.
    pub fn chat(&self, text: &str) -> String {
        let body = serde_json::json!({ "text": text }).to_string();
        let mut raw = Vec::new();
        self.send("POST", "/api/chat", &body)
            .read_to_end(&mut raw)
            .expect("read response");
        let raw = String::from_utf8_lossy(&raw);
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
        assert!(head.starts_with("HTTP/1.1 200"), "POST /api/chat: {raw}");
        let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
        v["request_id"].as_str().expect("request_id").to_owned()
    }

    /// Opens the event stream of answer `id`, its response head read.
    pub fn events(&self, id: &str) -> SseStream {
        let mut reader = BufReader::new(self.send("GET", &format!("/api/chat/{id}/events"), ""));
        let mut status = String::new();
        reader.read_line(&mut status).expect("status line");
        assert!(status.starts_with("HTTP/1.1 200"), "events: {status}");
        let mut line = String::new();
        while reader.read_line(&mut line).expect("head") > 0 && line != "\r\n" {
            line.clear();
        }
        SseStream { reader }
    }
}

/// One answer's server-sent events.
pub struct SseStream {
    reader: BufReader<TcpStream>,
}

impl SseStream {
    /// The next event, `(kind, data)`, or `None` at the end of the stream. Each event is one
    /// HTTP chunk, so the chunk-size lines around it are skipped as lines of no field.
    pub fn next_event(&mut self) -> Option<(String, Value)> {
        let (mut kind, mut data) = (String::new(), Value::Null);
        let mut line = String::new();
        loop {
            line.clear();
            if self.reader.read_line(&mut line).ok()? == 0 {
                return None;
            }
            let field = line.trim_end_matches(['\r', '\n']);
            if let Some(v) = field.strip_prefix("event: ") {
                kind = v.to_owned();
            } else if let Some(v) = field.strip_prefix("data: ") {
                data = serde_json::from_str(v).unwrap_or(Value::Null);
            } else if field.is_empty() && !kind.is_empty() {
                return Some((kind, data));
            }
        }
    }
}
