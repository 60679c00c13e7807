//! One client connection as the reactor sees it: a non-blocking stream, the bytes read but not
//! yet used (at most one request line: 1 MiB before authentication, 24 MiB after, room for a
//! `send` with media), the output waiting for the peer, and the clocks
//! behind the idle and write timeouts. A connection runs one request at a time, as the protocol
//! has always been: the next line is read once the current request has its terminal line.

use super::outbox::{Flushed, Outbox};
use super::protocol::DeltaLine;
use mio::net::UnixStream;
use std::io::{self, Read};
use std::time::{Duration, Instant};

/// Longest request line accepted from a client that has not authenticated: a key, a request.
pub(super) const MAX_LINE: usize = 1 << 20;

/// Longest request line accepted from an authenticated client: a `send` whose media (at most
/// 16 MiB decoded) travel as base64 in the line.
pub(super) const MAX_AUTHED_LINE: usize = 24 << 20;

/// What a connection is waiting for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Busy {
    /// Nothing: the next line may be read.
    Idle,
    /// The terminal reply of this request (its deltas stream meanwhile).
    Stream(String),
    /// An answer from the control worker.
    Control,
}

/// A line taken from the read buffer.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Line {
    Text(String),
    NotUtf8,
    TooLong,
}

#[derive(Debug)]
pub(super) struct Connection {
    pub(super) stream: UnixStream,
    inbuf: Vec<u8>,
    /// `inbuf[..scanned]` holds no newline: a long line is searched once, not on every read.
    scanned: usize,
    pub(super) out: Outbox,
    pub(super) authed: bool,
    pub(super) busy: Busy,
    /// The peer sent EOF: no more requests; close once nothing is pending.
    pub(super) read_closed: bool,
    /// Close as soon as the output is written (after `unauthorized`, a refused line...).
    pub(super) closing: bool,
    /// Last request or output progress.
    last_activity: Instant,
    /// Since when output has waited for a peer that takes none of it.
    stalled_since: Option<Instant>,
}

/// Why a connection is closed by the daemon.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Expiry {
    Idle,
    WriteStalled,
}

impl Connection {
    pub(super) fn new(stream: UnixStream, authed: bool, write_buffer: usize, now: Instant) -> Self {
        Self {
            stream,
            inbuf: Vec::new(),
            scanned: 0,
            out: Outbox::new(write_buffer),
            authed,
            busy: Busy::Idle,
            read_closed: false,
            closing: false,
            last_activity: now,
            stalled_since: None,
        }
    }

    /// Reads what the peer sent, without blocking, while no complete line is buffered (so one
    /// client cannot make the daemon buffer more than one request); EOF sets `read_closed`.
    pub(super) fn fill(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 16 * 1024];
        while !self.read_closed && !self.has_line() && self.inbuf.len() <= self.max_line() {
            match self.stream.read(&mut chunk) {
                Ok(0) => self.read_closed = true,
                Ok(n) => self.inbuf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn has_line(&mut self) -> bool {
        let found = self.inbuf[self.scanned..].contains(&b'\n');
        if !found {
            self.scanned = self.inbuf.len();
        }
        found
    }

    /// The longest request line this connection may send now.
    pub(super) fn max_line(&self) -> usize {
        if self.authed {
            MAX_AUTHED_LINE
        } else {
            MAX_LINE
        }
    }

    /// The next whole request line, if one is buffered (or the last, unterminated one at EOF).
    pub(super) fn next_line(&mut self, now: Instant) -> Option<Line> {
        let max = self.max_line();
        let end = match self.inbuf[self.scanned..].iter().position(|&b| b == b'\n') {
            Some(i) => self.scanned + i + 1,
            None if self.inbuf.len() > max => return Some(Line::TooLong),
            None if self.read_closed && !self.inbuf.is_empty() => self.inbuf.len(),
            None => return None,
        };
        if end > max + 1 {
            return Some(Line::TooLong);
        }
        let bytes: Vec<u8> = self.inbuf.drain(..end).collect();
        self.scanned = 0;
        self.last_activity = now;
        Some(match String::from_utf8(bytes) {
            Ok(text) => Line::Text(text),
            Err(_) => Line::NotUtf8,
        })
    }

    /// Writes pending output; keeps the write-stall clock.
    pub(super) fn flush(&mut self, now: Instant) -> io::Result<()> {
        let flushed = self.out.flush(&mut self.stream)?;
        self.clock(flushed, now);
        Ok(())
    }

    /// Sends a delta (see [`Outbox::send_delta`]); true when part of it, or an earlier line,
    /// still waits for the peer.
    pub(super) fn send_delta(&mut self, delta: &DeltaLine<'_>, now: Instant) -> io::Result<bool> {
        let flushed = self.out.send_delta(delta, &mut self.stream)?;
        let pending = flushed != Flushed::All;
        self.clock(flushed, now);
        Ok(pending)
    }

    fn clock(&mut self, flushed: Flushed, now: Instant) {
        match flushed {
            Flushed::All => {
                self.stalled_since = None;
                self.last_activity = now;
            }
            Flushed::Blocked { progress: true } => {
                self.stalled_since = Some(now);
                self.last_activity = now;
            }
            Flushed::Blocked { progress: false } => {
                self.stalled_since.get_or_insert(now);
            }
        }
    }

    /// Waits for nothing and owes nothing: may be closed without losing an answer.
    pub(super) fn is_quiet(&self) -> bool {
        self.busy == Busy::Idle && self.out.is_empty()
    }

    /// Whether the connection is done and can be dropped.
    pub(super) fn is_finished(&self) -> bool {
        self.out.is_empty() && (self.closing || (self.read_closed && self.busy == Busy::Idle))
    }

    /// When a timeout would next close this connection.
    pub(super) fn deadline(&self, idle: Duration, write: Duration) -> Option<Instant> {
        match self.stalled_since {
            Some(since) if !self.out.is_empty() => Some(since + write),
            _ if self.is_quiet() => Some(self.last_activity + idle),
            _ => None,
        }
    }

    /// Whether a timeout has passed at `now`.
    pub(super) fn expired(&self, now: Instant, idle: Duration, write: Duration) -> Option<Expiry> {
        let deadline = self.deadline(idle, write)?;
        if now < deadline {
            return None;
        }
        Some(if self.is_quiet() {
            Expiry::Idle
        } else {
            Expiry::WriteStalled
        })
    }
}
