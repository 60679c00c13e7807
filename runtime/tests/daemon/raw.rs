//! A raw socket client for protocol-level checks: one JSON line out, JSON lines back, each
//! read bounded by a timeout so a silent daemon fails the test instead of hanging it.

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

pub struct Raw {
    out: UnixStream,
    input: BufReader<UnixStream>,
}

/// What a read gave.
#[derive(Debug)]
pub enum Got {
    Line(Value),
    /// The daemon closed the connection.
    Eof,
}

impl Raw {
    pub fn connect(path: &Path) -> Self {
        let stream = UnixStream::connect(path).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        Self {
            out: stream.try_clone().expect("clone"),
            input: BufReader::new(stream),
        }
    }

    pub fn send(&mut self, line: &str) {
        self.out
            .write_all(format!("{line}\n").as_bytes())
            .expect("write");
    }

    pub fn send_text(&mut self, text: &str) {
        self.send(&serde_json::json!({"op": "send", "text": text}).to_string());
    }

    pub fn read_timeout(&mut self, limit: Duration) {
        self.input
            .get_ref()
            .set_read_timeout(Some(limit))
            .expect("timeout");
    }

    /// The next line, or EOF; panics on a read timeout.
    pub fn next(&mut self) -> Got {
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) => Got::Eof,
            Ok(_) => Got::Line(serde_json::from_str(&line).expect("a JSON line")),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Got::Eof,
            Err(e) => panic!("reading from hearthd: {e}"),
        }
    }

    /// The next line; panics on EOF.
    pub fn line(&mut self) -> Value {
        match self.next() {
            Got::Line(v) => v,
            Got::Eof => panic!("hearthd closed the connection"),
        }
    }

    /// Reads until the terminal line; returns every line read, the terminal last.
    pub fn until_terminal(&mut self) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let v = self.line();
            let done = !matches!(v["type"].as_str(), Some("delta" | "accepted" | "lag"));
            seen.push(v);
            if done {
                return seen;
            }
        }
    }
}
