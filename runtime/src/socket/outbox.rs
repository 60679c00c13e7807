//! One connection's pending output: whole lines, bounded for deltas. A client that reads slower
//! than the answer streams loses deltas — counted, and told with one `lag` line where the gap
//! is — while `accepted` and terminal lines are always kept, so a slow reader never stalls the
//! daemon and never loses its answer.

use super::protocol::Answer;
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
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Queues a line that must reach the client (acknowledgements, terminal answers).
    pub(super) fn push(&mut self, answer: &Answer) {
        self.mark_gap();
        self.enqueue(answer.to_line().into_bytes());
    }

    /// Queues a delta, or drops it when the client is `cap` bytes behind.
    pub(super) fn push_delta(&mut self, answer: &Answer) {
        let line = answer.to_line().into_bytes();
        if self.bytes + line.len() > self.cap {
            self.missed += 1;
            return;
        }
        self.mark_gap();
        self.enqueue(line);
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
            match out.write(&front[self.written..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    progress = true;
                    self.written += n;
                    self.bytes -= n;
                    if self.written == front.len() {
                        self.lines.pop_front();
                        self.written = 0;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Ok(Flushed::Blocked { progress });
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
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

    #[test]
    fn a_slow_reader_gets_a_lag_marker_and_always_its_terminal_line() {
        let one = delta("0123456789").to_line().len();
        let mut outbox = Outbox::new(3 * one);
        for _ in 0..10 {
            outbox.push_delta(&delta("0123456789"));
        }
        outbox.push(&Answer::Response {
            content: "whole answer".into(),
            request_id: "r".into(),
        });
        let mut peer = Slow {
            got: Vec::new(),
            room: usize::MAX,
        };
        assert_eq!(outbox.flush(&mut peer).expect("flush"), Flushed::All);
        let text = String::from_utf8(peer.got).expect("utf8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[..3].iter().all(|l| l.contains("0123456789")));
        assert_eq!(lines[3], r#"{"type":"lag","missed":7}"#);
        assert!(lines[4].contains("whole answer"));
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
