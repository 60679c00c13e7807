//! Server-sent events as the OpenAI-compatible sources stream them: `data:` payloads, with the
//! `[DONE]` sentinel reported as its own item.
//!
//! Follows the event-stream grammar (field lines, one leading space stripped from a value,
//! multi-line `data` joined with `\n`, `:` comments, a blank line dispatches) with two leniencies
//! for real servers: `data: [DONE]` ends the stream as soon as its line arrives, without waiting
//! for the blank line, and an event still open at the end of the stream is delivered rather than
//! dropped.

use super::error::HttpError;
use super::line::{LineReader, MAX_LINE_BYTES};
use std::io::BufRead;

/// The most `data` one event may gather over all its lines.
pub const MAX_EVENT_BYTES: usize = 8 * MAX_LINE_BYTES;

const DONE: &str = "[DONE]";
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name, if the server gave one.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// What the stream produced next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseItem {
    /// One complete event.
    Event(SseEvent),
    /// `data: [DONE]`: the server's end of the completion. Nothing is read after it.
    Done,
}

/// An event borrowed from the reader, valid until the next read: the per-token path reads
/// events this way so no buffer is allocated per event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseRef<'a> {
    /// One complete event.
    Event {
        /// The `event:` name, if the server gave one.
        event: Option<&'a str>,
        /// The `data:` lines joined with `\n`.
        data: &'a str,
    },
    /// `data: [DONE]`.
    Done,
}

/// Reads events from a body; an iterator of `Result<SseItem, HttpError>`. After `Done`, the end
/// of the stream, or an error, it yields nothing more.
pub struct SseReader<R> {
    lines: LineReader<R>,
    data: String,
    has_data: bool,
    event: Option<String>,
    event_limit: usize,
    finished: bool,
    /// The last event was handed out; its buffers are cleared (not freed) before the next.
    dispatched: bool,
}

enum Got {
    Event,
    Done,
}

impl<R: BufRead> SseReader<R> {
    /// With the SPEC limits: [`MAX_LINE_BYTES`] per line, [`MAX_EVENT_BYTES`] per event.
    pub fn new(inner: R) -> Self {
        Self::with_limits(inner, MAX_LINE_BYTES, MAX_EVENT_BYTES)
    }

    /// A reader of `inner` with lines and events capped at these byte counts.
    pub fn with_limits(inner: R, line_limit: usize, event_limit: usize) -> Self {
        Self {
            lines: LineReader::new(inner, line_limit),
            data: String::new(),
            has_data: false,
            event: None,
            event_limit,
            finished: false,
            dispatched: false,
        }
    }

    /// The next event or `Done`; `Ok(None)` at the end of the stream.
    pub fn next_item(&mut self) -> Result<Option<SseItem>, HttpError> {
        Ok(match self.advance()? {
            None => None,
            Some(Got::Done) => Some(SseItem::Done),
            Some(Got::Event) => Some(SseItem::Event(SseEvent {
                event: self.event.take(),
                data: std::mem::take(&mut self.data),
            })),
        })
    }

    /// [`Self::next_item`] without copying the event out of the reader's buffers.
    pub fn next_ref(&mut self) -> Result<Option<SseRef<'_>>, HttpError> {
        Ok(match self.advance()? {
            None => None,
            Some(Got::Done) => Some(SseRef::Done),
            Some(Got::Event) => Some(SseRef::Event {
                event: self.event.as_deref(),
                data: &self.data,
            }),
        })
    }

    /// After `Done`: whether the body ends right there, so its connection can serve the next
    /// call. Blocks until the end arrives or a read fails; bound the wait with
    /// [`StreamProgress::end_within`](super::StreamProgress::end_within).
    pub fn ends_here(&mut self) -> bool {
        self.lines.at_end()
    }

    fn advance(&mut self) -> Result<Option<Got>, HttpError> {
        if self.finished {
            return Ok(None);
        }
        if std::mem::take(&mut self.dispatched) {
            self.data.clear();
            self.event = None;
        }
        let got = self.read_item();
        if !matches!(got, Ok(Some(Got::Event))) {
            self.finished = true;
        }
        got
    }

    fn read_item(&mut self) -> Result<Option<Got>, HttpError> {
        loop {
            let number = self.lines.line_number() + 1;
            let Some(mut line) = self.lines.next_line()? else {
                return Ok(self.has_data.then(|| self.dispatch()));
            };
            if number == 1 && line.starts_with(BOM) {
                line = &line[BOM.len()..];
            }
            if line.is_empty() {
                if self.has_data {
                    return Ok(Some(self.dispatch()));
                }
                self.event = None;
                continue;
            }
            if line[0] == b':' {
                continue;
            }
            let line = std::str::from_utf8(line).map_err(|e| {
                HttpError::InvalidUtf8(format!("on event-stream line {number}: {e}"))
            })?;
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line, ""),
            };
            match field {
                "data" => {
                    if !self.has_data && value.trim() == DONE {
                        return Ok(Some(Got::Done));
                    }
                    let extra = usize::from(self.has_data) + value.len();
                    if self.data.len() + extra > self.event_limit {
                        return Err(HttpError::TooLarge {
                            limit: self.event_limit,
                        });
                    }
                    if self.has_data {
                        self.data.push('\n');
                    }
                    self.data.push_str(value);
                    self.has_data = true;
                }
                "event" => self.event = Some(value.to_owned()),
                // `id`, `retry` and unknown fields mean nothing to a completion stream.
                _ => {}
            }
        }
    }

    fn dispatch(&mut self) -> Got {
        self.has_data = false;
        self.dispatched = true;
        Got::Event
    }
}

impl<R: BufRead> Iterator for SseReader<R> {
    type Item = Result<SseItem, HttpError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_item().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;
    use std::io::{BufReader, Read};

    fn ev(data: &str) -> SseItem {
        SseItem::Event(SseEvent {
            event: None,
            data: data.to_owned(),
        })
    }

    fn named(event: &str, data: &str) -> SseItem {
        SseItem::Event(SseEvent {
            event: Some(event.to_owned()),
            data: data.to_owned(),
        })
    }

    fn parse(input: &[u8]) -> Result<Vec<SseItem>, HttpError> {
        SseReader::new(input).collect()
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines() {
        let got = parse(b"data: first\ndata:second\ndata:  third\n\ndata: next\n\n").expect("ok");
        assert_eq!(got, vec![ev("first\nsecond\n third"), ev("next")]);
    }

    #[test]
    fn crlf_and_lone_cr_end_lines() {
        let got = parse(b"data: a\r\ndata: b\r\n\r\ndata: c\r\rdata: d\n\n").expect("ok");
        assert_eq!(got, vec![ev("a\nb"), ev("c"), ev("d")]);
    }

    #[test]
    fn comments_ids_and_unknown_fields_are_ignored_and_event_names_kept() {
        let input = b": keep-alive\nid: 7\nretry: 100\nevent: delta\nfoo: bar\ndata: x\n\n\
                      event: lonely\n\n: only a comment\n\ndata: y\n\n";
        let got = parse(input).expect("ok");
        // An event name without data is discarded at its blank line and does not leak on.
        assert_eq!(got, vec![named("delta", "x"), ev("y")]);
    }

    #[test]
    fn done_is_its_own_item_and_ends_the_stream() {
        let input = b"data: {\"a\":1}\n\ndata: [DONE]\n\ndata: after\n\n";
        assert_eq!(
            parse(input).expect("ok"),
            vec![ev("{\"a\":1}"), SseItem::Done]
        );
        // Reported as soon as its line arrives, blank line or not.
        assert_eq!(parse(b"data:[DONE]").expect("ok"), vec![SseItem::Done]);
    }

    #[test]
    fn open_event_at_eof_is_delivered_and_bom_is_stripped() {
        assert_eq!(
            parse(b"\xEF\xBB\xBFdata: tail").expect("ok"),
            vec![ev("tail")]
        );
        assert_eq!(parse(b"").expect("ok"), vec![]);
        assert_eq!(parse(b"data\n\n").expect("ok"), vec![ev("")]);
    }

    #[test]
    fn a_line_over_one_mib_is_an_error_not_a_truncation() {
        let payload = "x".repeat(MAX_LINE_BYTES - "data: ".len());
        let fits = format!("data: {payload}\n\n");
        assert_eq!(
            parse(fits.as_bytes()).expect("exactly 1 MiB fits"),
            vec![ev(&payload)]
        );
        let over = format!("data: {payload}y\n\n");
        let got = parse(over.as_bytes());
        assert_eq!(
            got,
            Err(HttpError::LineTooLong {
                line: 1,
                limit: MAX_LINE_BYTES
            })
        );
    }

    #[test]
    fn an_event_over_its_limit_is_an_error() {
        let mut reader = SseReader::with_limits(&b"data: 12345\ndata: 6789\n\n"[..], 64, 8);
        assert_eq!(reader.next(), Some(Err(HttpError::TooLarge { limit: 8 })));
        assert_eq!(reader.next(), None);
    }

    #[test]
    fn invalid_utf8_is_an_error_naming_the_line() {
        let got = parse(b"data: ok\n\ndata: \xFF\xFE\n\n");
        let Err(HttpError::InvalidUtf8(msg)) = got else {
            panic!("expected InvalidUtf8: {got:?}")
        };
        assert!(msg.contains("line 3"), "{msg}");
    }

    /// Hands out the stream in the given chunk sizes, one `read` per chunk, so terminators and
    /// multi-byte characters get split across reads.
    struct Chunked(VecDeque<Vec<u8>>);

    impl Read for Chunked {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let Some(chunk) = self.0.front_mut() else {
                return Ok(0);
            };
            let n = chunk.len().min(buf.len());
            buf[..n].copy_from_slice(&chunk[..n]);
            chunk.drain(..n);
            if chunk.is_empty() {
                self.0.pop_front();
            }
            Ok(n)
        }
    }

    fn chunk(bytes: &[u8], cuts: &[usize]) -> Chunked {
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        points.extend([0, bytes.len()]);
        points.sort_unstable();
        points.dedup();
        Chunked(
            points
                .windows(2)
                .map(|w| bytes[w[0]..w[1]].to_vec())
                .collect(),
        )
    }

    #[derive(Debug, Clone)]
    struct Spec {
        name: Option<String>,
        lines: Vec<String>,
        comment: bool,
    }

    fn spec() -> impl Strategy<Value = Spec> {
        let text =
            "[a-z0-9 :{}\",é中😀]{0,12}".prop_filter("not the sentinel", |s| s.trim() != DONE);
        (
            proptest::option::of("[a-z]{1,6}"),
            proptest::collection::vec(text, 1..4),
            any::<bool>(),
        )
            .prop_map(|(name, lines, comment)| Spec {
                name,
                lines,
                comment,
            })
    }

    fn encode(specs: &[Spec], eol: &str) -> (Vec<u8>, Vec<SseItem>) {
        let mut out = String::new();
        let mut want = Vec::new();
        for spec in specs {
            if spec.comment {
                out.push_str(&format!(": note{eol}"));
            }
            if let Some(name) = &spec.name {
                out.push_str(&format!("event: {name}{eol}"));
            }
            for line in &spec.lines {
                out.push_str(&format!("data: {line}{eol}"));
            }
            out.push_str(eol);
            want.push(SseItem::Event(SseEvent {
                event: spec.name.clone(),
                data: spec.lines.join("\n"),
            }));
        }
        out.push_str(&format!("data: [DONE]{eol}{eol}"));
        want.push(SseItem::Done);
        (out.into_bytes(), want)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(192))]

        #[test]
        fn any_chunking_yields_the_events_of_the_whole_stream(
            specs in proptest::collection::vec(spec(), 0..6),
            eol in prop_oneof![Just("\n"), Just("\r\n"), Just("\r")],
            cuts in proptest::collection::vec(any::<usize>(), 0..24),
            buffer in 1usize..16,
        ) {
            let (bytes, want) = encode(&specs, eol);
            let whole: Vec<SseItem> = SseReader::new(&bytes[..]).collect::<Result<_, _>>()
                .expect("whole stream parses");
            prop_assert_eq!(&whole, &want);
            let reader = BufReader::with_capacity(buffer, chunk(&bytes, &cuts));
            let pieces: Vec<SseItem> = SseReader::new(reader).collect::<Result<_, _>>()
                .expect("chunked stream parses");
            prop_assert_eq!(pieces, whole);
        }
    }
}
