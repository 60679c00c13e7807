//! Encodings of what the index stores: vectors as little-endian `f32` blobs, and a 64-bit
//! content hash.
//!
//! Vectors are kept full precision rather than quantised: a home knowledge base holds
//! thousands of passages, not millions, so 4 bytes a component costs little and scores
//! exactly what the embedder produced.

/// `v` as little-endian `f32`s.
pub(crate) fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The vector of a blob written by [`to_blob`]; trailing bytes short of a component are ignored.
pub(crate) fn from_blob(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// FNV-1a (64-bit) of `bytes`, as the `i64` SQLite stores. Not a defence against anyone: it
/// only tells whether a file whose time or size changed has new content (an editor that saves
/// without changes, a `touch`), so a collision costs at most one missed re-index.
pub(crate) fn content_hash(bytes: &[u8]) -> i64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let h = bytes
        .iter()
        .fold(OFFSET, |h, &b| (h ^ u64::from(b)).wrapping_mul(PRIME));
    i64::from_ne_bytes(h.to_ne_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip() {
        let v = vec![0.5, -1.25, 3.0e-7];
        assert_eq!(from_blob(&to_blob(&v)), v);
    }

    #[test]
    fn fnv1a_matches_the_published_vectors() {
        assert_eq!(content_hash(b"") as u64, 0xcbf2_9ce4_8422_2325);
        assert_eq!(content_hash(b"a") as u64, 0xaf63_dc4c_8601_ec8c);
    }
}
