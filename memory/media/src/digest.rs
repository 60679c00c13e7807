//! Content addresses: the lower-case hex sha256 of a blob's bytes.

use std::io::Read;

use sha2::{Digest as _, Sha256};

use crate::MediaError;

/// Length of a digest string: 32 bytes of sha256 as hex.
pub const DIGEST_LEN: usize = 64;

const HEX: &[u8; 16] = b"0123456789abcdef";

fn to_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}

/// The digest of `data`: lower-case hex sha256, 64 characters.
pub fn digest_of(data: &[u8]) -> String {
    to_hex(&Sha256::digest(data))
}

/// Hashes a reader in fixed-size chunks, so checking a large blob does not load it whole.
/// Returns the digest and the number of bytes read.
pub(crate) fn digest_reader(mut reader: impl Read) -> std::io::Result<(String, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    Ok((to_hex(&hasher.finalize()), total))
}

/// Whether `s` is a well-formed digest. Only lower-case is accepted so that one content has
/// exactly one spelling (and one path on disk); this also keeps `..`, `/` and any other path
/// syntax out of blob paths.
pub fn is_valid_digest(s: &str) -> bool {
    s.len() == DIGEST_LEN && is_lower_hex(s)
}

/// Whether every character of `s` is a lower-case hex digit (the only spelling a digest has).
pub(crate) fn is_lower_hex(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Checks a digest string given by a caller, before it reaches SQL or the file system.
pub(crate) fn check_digest(s: &str) -> Result<(), MediaError> {
    if is_valid_digest(s) {
        Ok(())
    } else {
        Err(MediaError::InvalidDigest {
            digest: s.to_owned(),
        })
    }
}
