//! One connection's pending output: whole lines, bounded for deltas. A client that reads slower
//! than the answer streams loses deltas — counted, and told with one `lag` line where the gap
//! is — while `accepted` and terminal lines are always kept, so a slow reader never stalls the
//! daemon and never loses its answer.

use super::protocol::{Answer, DeltaLine};
use super::write_some::write_some;
use std::collections::VecDeque;
use std::io::{self, Write};

#[derive(Debug)]
pub(super) struct Outbox {
    lines: VecDeque<Vec<u8>>,
    /// Bytes of the front line already written.
    written: usize,
    bytes: usize,
    cap: usize,
    /// Deltas dropped since the last line that was kept.
    missed: u64,
    /// Where a delta line is written before it goes out; reused, so a client that keeps up
    /// costs no allocation per delta.
    scratch: Vec<u8>,
}

/// What a flush achieved.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Flushed {
    /// Everything is written.
    All,
    /// The peer's buffer is full; `progress` tells whether any byte went out.
    Blocked { progress: bool },
}

impl Outbox {
    pub(super) fn new(cap: usize) -> Self {
        Self {
            lines: VecDeque::new(),
            written: 0,
            bytes: 0,
            cap,
            missed: 0,
            scratch: Vec::new(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Nothing waits and no lag notice is owed: the next byte on the socket is a new line.
    pub(super) fn is_clear(&self) -> bool {
        self.lines.is_empty() && self.missed == 0
    }

    /// Queues the rest of a line another writer began (see [`direct`](super::direct)); it goes
    /// out before anything queued after it.
    pub(super) fn push_rest(&mut self, rest: Vec<u8>) {
        if !rest.is_empty() {
            self.enqueue(rest);
        }
    }

    /// Queues a line that must reach the client (acknowledgements, terminal answers).
    pub(super) fn push(&mut self, answer: &Answer) {
        self.mark_gap();
        self.enqueue(answer.to_line().into_bytes());
    }

    /// Sends a delta: written straight to `out` when nothing waits before it, and only what
    /// the peer did not take is queued; behind other lines it is queued, or dropped when the
    /// client is `cap` bytes behind. Then writes what `out` takes without blocking.
    pub(super) fn send_delta(
        &mut self,
        delta: &DeltaLine<'_>,
        out: &mut impl Write,
    ) -> io::Result<Flushed> {
        self.scratch.clear();
        delta.write_to(&mut self.scratch);
        if self.lines.is_empty() && self.missed == 0 {
            let sent = write_some(out, &self.scratch)?;
            if sent == self.scratch.len() {
                return Ok(Flushed::All);
            }
            self.enqueue(self.scratch[sent..].to_vec());
            return Ok(Flushed::Blocked { progress: sent > 0 });
        }
        if self.bytes + self.scratch.len() > self.cap {
            self.missed += 1;
        } else {
            self.mark_gap();
            self.enqueue(self.scratch.clone());
        }
        self.flush(out)
    }

    /// Counts `n` deltas lost before they reached this connection (the ring overran).
    pub(super) fn note_missed(&mut self, n: u64) {
        self.missed += n;
    }

    fn mark_gap(&mut self) {
        if self.missed > 0 {
            let missed = std::mem::take(&mut self.missed);
            self.enqueue(Answer::Lag { missed }.to_line().into_bytes());
        }
    }

    fn enqueue(&mut self, line: Vec<u8>) {
        self.bytes += line.len();
        self.lines.push_back(line);
    }

    /// Writes as much as `out` takes without blocking.
    pub(super) fn flush(&mut self, out: &mut impl Write) -> io::Result<Flushed> {
        let mut progress = false;
        while let Some(front) = self.lines.front() {
            let sent = write_some(out, &front[self.written..])?;
            progress |= sent > 0;
            self.written += sent;
            self.bytes -= sent;
            if self.written < front.len() {
                return Ok(Flushed::Blocked { progress });
            }
            self.lines.pop_front();
            self.written = 0;
        }
        Ok(Flushed::All)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peer that takes at most `room` bytes, then would block.
    struct Slow {
        got: Vec<u8>,
        room: usize,
    }

    impl Write for Slow {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn delta(text: &str) -> Answer {
        Answer::Delta {
            content: text.into(),
            reasoning: false,
            reset: false,
        }
    }

    fn line(text: &str) -> DeltaLine<'_> {
        DeltaLine {
            content: text,
            reasoning: false,
            reset: false,
        }
    }

    #[test]
    fn a_slow_reader_gets_a_lag_marker_and_always_its_terminal_line() {
        let one = delta("0123456789").to_line().len();
        let mut outbox = Outbox::new(3 * one);
        let mut peer = Slow {
            got: Vec::new(),
            room: 0,
        };
        for _ in 0..10 {
            let sent = outbox.send_delta(&line("0123456789"), &mut peer);
            assert_eq!(sent.expect("send"), Flushed::Blocked { progress: false });
        }
        outbox.push(&Answer::Response {
            content: "whole answer".into(),
            request_id: "r".into(),
        });
        peer.room = usize::MAX;
        assert_eq!(outbox.flush(&mut peer).expect("flush"), Flushed::All);
        let text = String::from_utf8(peer.got).expect("utf8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[..3].iter().all(|l| l.contains("0123456789")));
        assert_eq!(lines[3], r#"{"type":"lag","missed":7}"#);
        assert!(lines[4].contains("whole answer"));
    }

    /// A delta behind nothing goes straight out and leaves nothing queued; when the peer takes
    /// only part of it, exactly the rest is queued, and the next delta waits behind it.
    #[test]
    fn a_delta_behind_nothing_is_written_at_once_and_only_its_rest_queued() {
        let mut outbox = Outbox::new(1 << 20);
        let mut peer = Slow {
            got: Vec::new(),
            room: usize::MAX,
        };
        assert_eq!(
            outbox.send_delta(&line("abc"), &mut peer).expect("send"),
            Flushed::All
        );
        assert!(outbox.is_empty());
        peer.room = 4;
        assert_eq!(
            outbox.send_delta(&line("def"), &mut peer).expect("send"),
            Flushed::Blocked { progress: true }
        );
        assert_eq!(
            outbox.send_delta(&line("ghi"), &mut peer).expect("send"),
            Flushed::Blocked { progress: false }
        );
        peer.room = usize::MAX;
        assert_eq!(outbox.flush(&mut peer).expect("flush"), Flushed::All);
        let expected: String = ["abc", "def", "ghi"]
            .iter()
            .map(|t| delta(t).to_line())
            .collect();
        assert_eq!(String::from_utf8(peer.got).expect("utf8"), expected);
    }

    #[test]
    fn partial_writes_resume_where_they_stopped() {
        let mut outbox = Outbox::new(1 << 20);
        outbox.push(&delta("abc"));
        outbox.push(&delta("def"));
        let mut peer = Slow {
            got: Vec::new(),
            room: 5,
        };
        assert_eq!(
            outbox.flush(&mut peer).expect("flush"),
            Flushed::Blocked { progress: true }
        );
        assert_eq!(
            outbox.flush(&mut peer).expect("flush"),
            Flushed::Blocked { progress: false }
        );
        peer.room = usize::MAX;
        assert_eq!(outbox.flush(&mut peer).expect("flush"), Flushed::All);
        assert!(outbox.is_empty());
        assert_eq!(
            String::from_utf8(peer.got).expect("utf8"),
            format!("{}{}", delta("abc").to_line(), delta("def").to_line())
        );
    }
}
