//! Newline-delimited frames: a reader that survives bad input and a writer of whole frames.

use std::io::{self, Read, Write};

use crate::error::{FrameError, RpcError};
use crate::message::Message;

/// The default frame limit (SPEC §6.3: 1 MiB per line).
pub const DEFAULT_MAX_FRAME: usize = 1 << 20;

const INITIAL_BUFFER: usize = 64 << 10;

/// Splits a byte stream into frames of at most `limit` bytes.
///
/// Memory stays bounded by the limit: a longer line is not buffered but skipped up to its newline
/// and reported once as [`FrameError::TooLarge`]; the frames after it are read normally.
pub struct FrameReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Where the newline search resumes (bytes before it in `start..scan` hold none).
    scan: usize,
    limit: usize,
    /// Bytes of an oversize line skipped so far; `Some` while skipping.
    skipping: Option<usize>,
}

impl<R: Read> FrameReader<R> {
    /// A reader with the given frame limit (excluding the newline).
    pub fn new(inner: R, limit: usize) -> FrameReader<R> {
        let limit = limit.max(1);
        FrameReader {
            inner,
            buf: vec![0; INITIAL_BUFFER.min(limit + 2)],
            start: 0,
            end: 0,
            scan: 0,
            limit,
            skipping: None,
        }
    }

    /// The next frame, without its line ending; `Ok(None)` at the end of the stream.
    ///
    /// The inner `Err` is about one frame only and the next call reads on; the outer `Err` is the
    /// stream's own failure. Blank lines are skipped; a last line without a newline is a frame.
    pub fn next_frame(&mut self) -> io::Result<Option<Result<&[u8], FrameError>>> {
        loop {
            if let Some(pos) = self.buf[self.scan..self.end]
                .iter()
                .position(|&b| b == b'\n')
            {
                let line_end = self.scan + pos;
                let line_start = self.start;
                self.start = line_end + 1;
                self.scan = self.start;
                if let Some(skipped) = self.skipping.take() {
                    return Ok(Some(Err(self.too_large(skipped + (line_end - line_start)))));
                }
                match self.frame(line_start, line_end) {
                    Some(Ok((a, b))) => return Ok(Some(Ok(&self.buf[a..b]))),
                    Some(Err(e)) => return Ok(Some(Err(e))),
                    None => continue,
                }
            }
            self.scan = self.end;
            let pending = self.end - self.start;
            if let Some(skipped) = self.skipping.as_mut() {
                *skipped += pending;
                self.reset();
            } else if pending > self.limit {
                self.skipping = Some(pending);
                self.reset();
            }
            self.make_room();
            let n = loop {
                match self.inner.read(&mut self.buf[self.end..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            if n == 0 {
                return Ok(match self.at_eof() {
                    Some(Ok((a, b))) => Some(Ok(&self.buf[a..b])),
                    Some(Err(e)) => Some(Err(e)),
                    None => None,
                });
            }
            self.end += n;
        }
    }

    /// Whether a whole frame is already buffered, so the next [`next_frame`](Self::next_frame)
    /// returns without reading (a reading thread hands the reader on only when it does not).
    pub fn holds_frame(&self) -> bool {
        self.buf[self.scan..self.end].contains(&b'\n')
    }

    /// The stream being read.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    fn at_eof(&mut self) -> Option<Result<(usize, usize), FrameError>> {
        if let Some(skipped) = self.skipping.take() {
            let pending = self.end - self.start;
            self.reset();
            return Some(Err(self.too_large(skipped + pending)));
        }
        let (start, end) = (self.start, self.end);
        self.reset();
        self.frame(start, end)
    }

    /// The range of the frame in `start..end`, or `None` for a blank line.
    fn frame(&self, start: usize, mut end: usize) -> Option<Result<(usize, usize), FrameError>> {
        if end > start && self.buf[end - 1] == b'\r' {
            end -= 1;
        }
        let line = &self.buf[start..end];
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        if line.len() > self.limit {
            return Some(Err(self.too_large(line.len())));
        }
        Some(Ok((start, end)))
    }

    fn too_large(&self, len: usize) -> FrameError {
        FrameError::TooLarge {
            len,
            limit: self.limit,
        }
    }

    fn reset(&mut self) {
        self.start = 0;
        self.end = 0;
        self.scan = 0;
    }

    fn make_room(&mut self) {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.scan -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            // limit + 2 always leaves room for one more byte past a pending line of `limit`
            // bytes, which is what tells a full-length frame from an oversize one.
            let len = (self.buf.len() * 2).min(self.limit + 2).max(self.end + 1);
            self.buf.resize(len, 0);
        }
    }
}

/// Writes whole frames: the encoded message, then `\n`, then a flush.
pub struct FrameWriter<W> {
    inner: W,
    buf: Vec<u8>,
    limit: usize,
}

impl<W: Write> FrameWriter<W> {
    /// A writer that refuses frames over `limit` bytes (the peer would skip them anyway).
    pub fn new(inner: W, limit: usize) -> FrameWriter<W> {
        FrameWriter {
            inner,
            buf: Vec::with_capacity(1024),
            limit,
        }
    }

    /// Encodes and writes one frame; nothing is written when it fails to encode or is too large.
    pub fn write(&mut self, message: &Message) -> Result<(), RpcError> {
        self.buf.clear();
        message
            .encode_into(&mut self.buf)
            .map_err(|source| RpcError::Codec {
                method: method_of(message).to_owned(),
                source,
            })?;
        if self.buf.len() > self.limit {
            return Err(RpcError::OutgoingTooLarge {
                method: method_of(message).to_owned(),
                len: self.buf.len(),
                limit: self.limit,
            });
        }
        self.buf.push(b'\n');
        self.inner
            .write_all(&self.buf)
            .and_then(|()| self.inner.flush())
            .map_err(|source| RpcError::Io {
                op: "write frame",
                source,
            })
    }
}

fn method_of(message: &Message) -> &str {
    match message {
        Message::Request(r) => &r.method,
        Message::Notification(n) => &n.method,
        Message::Response(_) => "response",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its bytes a few at a time, so frames straddle reads.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn frames(input: &[u8], limit: usize, chunk: usize) -> Vec<Result<String, FrameError>> {
        let mut r = FrameReader::new(Trickle(input, chunk), limit);
        let mut out = Vec::new();
        while let Some(f) = r.next_frame().expect("no io error") {
            out.push(f.map(|b| String::from_utf8_lossy(b).into_owned()));
        }
        out
    }

    #[test]
    fn oversize_line_is_skipped_and_the_next_frame_read() {
        let mut input = b"{\"a\":1}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 100));
        input.extend(b"\n{\"b\":2}\r\n\n  \nlast");
        for chunk in [1, 3, 7, 64, 1000] {
            let got = frames(&input, 16, chunk);
            assert_eq!(
                got,
                vec![
                    Ok("{\"a\":1}".into()),
                    Err(FrameError::TooLarge {
                        len: 100,
                        limit: 16
                    }),
                    Ok("{\"b\":2}".into()),
                    Ok("last".into()),
                ],
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn a_frame_of_exactly_the_limit_passes_one_more_byte_does_not() {
        let ok = "y".repeat(16);
        let big = "z".repeat(17);
        let input = format!("{ok}\n{big}\n{ok}");
        for chunk in [1, 5, 16, 17, 100] {
            assert_eq!(
                frames(input.as_bytes(), 16, chunk),
                vec![
                    Ok(ok.clone()),
                    Err(FrameError::TooLarge { len: 17, limit: 16 }),
                    Ok(ok.clone())
                ],
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn oversize_tail_without_newline_is_reported_at_eof() {
        let input = "w".repeat(40);
        assert_eq!(
            frames(input.as_bytes(), 16, 8),
            vec![Err(FrameError::TooLarge { len: 40, limit: 16 })]
        );
    }

    /// Fails every other read, as a read that hits its deadline does.
    struct Flaky<'a>(Trickle<'a>, bool);

    impl Read for Flaky<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.1 = !self.1;
            if self.1 {
                return Err(io::ErrorKind::TimedOut.into());
            }
            self.0.read(out)
        }
    }

    /// A caller reading with a deadline gives the reader back mid-frame; the next reader must
    /// find every frame whole, the oversize one still skipped.
    #[test]
    fn a_failed_read_loses_nothing_and_reading_resumes() {
        let mut input = b"{\"a\":1}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 40));
        input.extend(b"\n{\"b\":2}\n");
        for chunk in [1, 3, 7, 64] {
            let mut r = FrameReader::new(Flaky(Trickle(&input, chunk), false), 16);
            let mut got = Vec::new();
            loop {
                match r.next_frame() {
                    Err(e) => assert_eq!(e.kind(), io::ErrorKind::TimedOut),
                    Ok(None) => break,
                    Ok(Some(f)) => got.push(f.map(|b| String::from_utf8_lossy(b).into_owned())),
                }
            }
            assert_eq!(
                got,
                vec![
                    Ok("{\"a\":1}".into()),
                    Err(FrameError::TooLarge { len: 40, limit: 16 }),
                    Ok("{\"b\":2}".into()),
                ],
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn holds_frame_tells_a_buffered_frame_from_a_partial_one() {
        let mut r = FrameReader::new(&b"{\"a\":1}\n{\"b\":2}\n{\"c"[..], 64);
        assert!(!r.holds_frame());
        assert!(matches!(r.next_frame(), Ok(Some(Ok(_)))));
        assert!(r.holds_frame());
        assert!(matches!(r.next_frame(), Ok(Some(Ok(_)))));
        assert!(!r.holds_frame(), "a partial frame needs another read");
    }

    #[test]
    fn buffer_never_grows_past_the_limit() {
        let input = vec![b'q'; 10 << 20];
        let mut r = FrameReader::new(Trickle(&input, 1 << 16), 1 << 10);
        assert!(matches!(
            r.next_frame(),
            Ok(Some(Err(FrameError::TooLarge { len, .. }))) if len == 10 << 20
        ));
        assert!(r.buf.len() <= (1 << 10) + 2);
    }

    #[test]
    fn writer_refuses_oversize_frames_and_writes_nothing() {
        let mut out = Vec::new();
        let mut w = FrameWriter::new(&mut out, 40);
        let small = Message::Notification(crate::Notification {
            method: "a".into(),
            params: serde_json::Value::Null,
        });
        w.write(&small).expect("fits");
        let big = Message::Notification(crate::Notification {
            method: "b".repeat(64),
            params: serde_json::Value::Null,
        });
        assert!(matches!(
            w.write(&big),
            Err(RpcError::OutgoingTooLarge { limit: 40, .. })
        ));
        assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n");
    }
}
