//! The floor every stdio protocol is measured against: one request line written to a child's
//! stdin, one line read back from its stdout, no parsing on this side.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout};
use std::time::Duration;

use crate::timed;

/// A child that answers every line with one line.
pub struct LinePingPong {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    request: Vec<u8>,
}

impl LinePingPong {
    /// Takes over `child`'s piped stdin and stdout; `request` is sent (with a newline) each round.
    pub fn new(mut child: Child, request: &str) -> LinePingPong {
        LinePingPong {
            stdin: child.stdin.take().expect("a piped stdin"),
            stdout: BufReader::new(child.stdout.take().expect("a piped stdout")),
            child,
            request: format!("{request}\n").into_bytes(),
        }
    }

    /// The child's process id.
    pub fn child_id(&self) -> u32 {
        self.child.id()
    }

    /// Bytes of the request line, newline included.
    pub fn request_len(&self) -> usize {
        self.request.len()
    }

    /// `rounds` round trips, each one's time pushed to `samples`; the total.
    pub fn run(&mut self, rounds: u64, samples: &mut Vec<Duration>) -> Duration {
        let mut reply = Vec::with_capacity(1024);
        let Self {
            stdin,
            stdout,
            request,
            ..
        } = self;
        timed(rounds, samples, || {
            stdin.write_all(request).expect("write");
            stdin.flush().expect("flush");
            reply.clear();
            stdout.read_until(b'\n', &mut reply).expect("read");
            std::hint::black_box(&reply);
        })
    }

    /// Closes stdin (the child's cue to exit) and reaps it.
    pub fn stop(self) {
        drop(self.stdin);
        let mut child = self.child;
        let _ = child.wait();
    }
}
