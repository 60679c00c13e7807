//! Line splitting for streamed bodies with a hard length limit enforced while reading, so a
//! server that never sends a newline cannot make us buffer without bound.

use super::error::HttpError;
use std::io::{self, BufRead};

/// The longest line a streamed body may carry (SPEC §7.2: 1 MiB), terminator excluded.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Splits on `\n`, `\r\n` and a lone `\r` (the three SSE line ends), across any chunking.
pub(super) struct LineReader<R> {
    inner: R,
    limit: usize,
    line: Vec<u8>,
    /// The previous line ended in `\r`; a `\n` arriving next belongs to that terminator.
    skip_lf: bool,
    lines_read: u64,
}

impl<R: BufRead> LineReader<R> {
    pub(super) fn new(inner: R, limit: usize) -> Self {
        Self {
            inner,
            limit,
            line: Vec::new(),
            skip_lf: false,
            lines_read: 0,
        }
    }

    /// 1-based number of the line last returned (or being read, in an error).
    pub(super) fn line_number(&self) -> u64 {
        self.lines_read
    }

    /// The next line without its terminator; `None` at the end of the stream. A final line
    /// without a terminator is still returned.
    pub(super) fn next_line(&mut self) -> Result<Option<&[u8]>, HttpError> {
        self.line.clear();
        loop {
            let buf = match self.inner.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(HttpError::from_io(e)),
            };
            if buf.is_empty() {
                if self.line.is_empty() {
                    return Ok(None);
                }
                self.lines_read += 1;
                return Ok(Some(&self.line));
            }
            let start = usize::from(std::mem::take(&mut self.skip_lf) && buf[0] == b'\n');
            let rest = &buf[start..];
            let end = rest.iter().position(|&b| b == b'\n' || b == b'\r');
            let take = end.unwrap_or(rest.len());
            if self.line.len() + take > self.limit {
                return Err(HttpError::LineTooLong {
                    line: self.lines_read + 1,
                    limit: self.limit,
                });
            }
            self.line.extend_from_slice(&rest[..take]);
            match end {
                Some(at) => {
                    self.skip_lf = rest[at] == b'\r';
                    self.inner.consume(start + at + 1);
                    self.lines_read += 1;
                    return Ok(Some(&self.line));
                }
                None => {
                    let used = start + take;
                    self.inner.consume(used);
                }
            }
        }
    }
}

impl<R: BufRead> LineReader<R> {
    /// Whether the body ends here, blank lines aside (what may follow an end marker). Reads
    /// only blank lines; a read error or anything else means no.
    pub(super) fn at_end(&mut self) -> bool {
        loop {
            let blank = match self.inner.fill_buf() {
                Ok([]) => return true,
                Ok(buf) => buf
                    .iter()
                    .take_while(|&&b| b == b'\r' || b == b'\n')
                    .count(),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            };
            if blank == 0 {
                return false;
            }
            self.inner.consume(blank);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], limit: usize) -> Result<Vec<Vec<u8>>, HttpError> {
        let mut reader = LineReader::new(input, limit);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line()? {
            out.push(line.to_vec());
        }
        Ok(out)
    }

    #[test]
    fn all_three_terminators_and_a_final_unterminated_line() {
        let got = lines(b"a\nb\r\nc\rd\r\r\ne", 100).expect("lines");
        let want: Vec<&[u8]> = vec![b"a", b"b", b"c", b"d", b"", b"e"];
        assert_eq!(got, want);
    }

    #[test]
    fn the_end_is_seen_past_blank_lines_and_not_past_anything_else() {
        assert!(LineReader::new(&b""[..], 8).at_end());
        assert!(LineReader::new(&b"\r\n\n"[..], 8).at_end());
        let mut more = LineReader::new(&b"\ndata: x\n"[..], 8);
        assert!(!more.at_end());
        assert_eq!(more.next_line().expect("line"), Some(&b"data: x"[..]));
    }

    #[test]
    fn a_line_at_the_limit_passes_and_one_byte_more_fails() {
        let ok = [b'x'; 8];
        assert_eq!(lines(&[&ok[..], b"\n"].concat(), 8).expect("fits").len(), 1);
        let long = [b'x'; 9];
        assert_eq!(
            lines(&[&long[..], b"\n"].concat(), 8),
            Err(HttpError::LineTooLong { line: 1, limit: 8 })
        );
    }
}
