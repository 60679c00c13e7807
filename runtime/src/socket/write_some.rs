//! A non-blocking write of as much as a peer takes now.

use std::io::{self, Write};

/// Writes as much of `buf` as `out` takes now: 0 when it would block.
pub(super) fn write_some(out: &mut impl Write, buf: &[u8]) -> io::Result<usize> {
    let mut sent = 0;
    while sent < buf.len() {
        match out.write(&buf[sent..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(sent)
}
