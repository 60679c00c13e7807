//! Newline-delimited JSON, Ollama's native streaming format: one JSON value per line, blank
//! lines skipped, the same per-line limit as the event stream.

use super::error::HttpError;
use super::line::{LineReader, MAX_LINE_BYTES};
use std::io::BufRead;

/// Reads lines of JSON; as an iterator it yields each non-blank line's text, which is what the
/// Lua adapters take. After the end of the stream or an error it yields nothing more.
pub struct NdjsonReader<R> {
    lines: LineReader<R>,
    finished: bool,
}

impl<R: BufRead> NdjsonReader<R> {
    /// With a [`MAX_LINE_BYTES`] line limit.
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_LINE_BYTES)
    }

    /// A reader of `inner` with lines capped at `line_limit` bytes.
    pub fn with_limit(inner: R, line_limit: usize) -> Self {
        Self {
            lines: LineReader::new(inner, line_limit),
            finished: false,
        }
    }

    /// The next non-blank line as text, not yet parsed; `Ok(None)` at the end of the stream.
    pub fn next_line(&mut self) -> Result<Option<String>, HttpError> {
        if self.finished {
            return Ok(None);
        }
        let line = self.read_line();
        if !matches!(line, Ok(Some(_))) {
            self.finished = true;
        }
        line
    }

    /// After the line that ends the answer: whether the body ends right there, so its connection
    /// can serve the next call. Blocks until the end arrives or a read fails; bound the wait
    /// with [`StreamProgress::end_within`](super::StreamProgress::end_within).
    pub fn ends_here(&mut self) -> bool {
        self.lines.at_end()
    }

    /// The next non-blank line parsed as JSON.
    pub fn next_value(&mut self) -> Result<Option<serde_json::Value>, HttpError> {
        let Some(text) = self.next_line()? else {
            return Ok(None);
        };
        serde_json::from_str(&text).map(Some).map_err(|e| {
            self.finished = true;
            HttpError::Json {
                line: self.lines.line_number(),
                message: e.to_string(),
            }
        })
    }

    fn read_line(&mut self) -> Result<Option<String>, HttpError> {
        loop {
            let number = self.lines.line_number() + 1;
            let Some(line) = self.lines.next_line()? else {
                return Ok(None);
            };
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let text = std::str::from_utf8(line)
                .map_err(|e| HttpError::InvalidUtf8(format!("on json line {number}: {e}")))?;
            return Ok(Some(text.trim().to_owned()));
        }
    }
}

impl<R: BufRead> Iterator for NdjsonReader<R> {
    type Item = Result<String, HttpError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_line().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_value_per_line_blank_lines_and_crlf_skipped() {
        let input = b"{\"a\":1}\r\n\n  \r\n{\"done\":true}\n";
        let mut reader = NdjsonReader::new(&input[..]);
        assert_eq!(reader.next_value().expect("ok"), Some(json!({"a": 1})));
        assert_eq!(
            reader.next_value().expect("ok"),
            Some(json!({"done": true}))
        );
        assert_eq!(reader.next_value().expect("ok"), None);
        let lines: Vec<String> = NdjsonReader::new(&b"{\"x\":\"y\"}\n\n[1]"[..])
            .collect::<Result<_, _>>()
            .expect("ok");
        assert_eq!(lines, vec!["{\"x\":\"y\"}".to_owned(), "[1]".to_owned()]);
    }

    #[test]
    fn invalid_json_names_its_line() {
        let mut reader = NdjsonReader::new(&b"{\"a\":1}\n\n{oops\n{\"b\":2}\n"[..]);
        assert!(reader.next_value().expect("first").is_some());
        let Err(HttpError::Json { line, .. }) = reader.next_value() else {
            panic!("expected a json error")
        };
        assert_eq!(line, 3);
        assert_eq!(reader.next_value(), Ok(None), "nothing after an error");
    }

    #[test]
    fn long_lines_and_invalid_utf8_are_errors() {
        let long = format!("{{\"k\":\"{}\"}}\n", "v".repeat(MAX_LINE_BYTES));
        assert_eq!(
            NdjsonReader::new(long.as_bytes()).next_line(),
            Err(HttpError::LineTooLong {
                line: 1,
                limit: MAX_LINE_BYTES
            })
        );
        let got = NdjsonReader::new(&b"{\"k\":\"\xC3\x28\"}\n"[..]).next_line();
        assert!(matches!(got, Err(HttpError::InvalidUtf8(m)) if m.contains("line 1")));
    }
}
