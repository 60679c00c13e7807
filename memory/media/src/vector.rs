//! Optional dense vectors of media items (an image model may not be configured). Each item
//! holds at most one vector, tagged with the fingerprint of the space it was computed in;
//! vectors are only ever handed out per fingerprint, because vectors of different spaces (or
//! dimensions) are not comparable.

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use crate::digest::check_digest;
use crate::error::SqlContext;
use crate::{MediaError, MediaStore};

/// Encodes as little-endian f32, the layout of the `vector` column.
fn encode(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn decode(blob: &[u8]) -> Option<Vec<f32>> {
    if !blob.len().is_multiple_of(4) {
        return None;
    }
    Some(
        blob.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

impl MediaStore {
    /// Sets the vector of `digest` in the space `fingerprint`, replacing any vector it had (of
    /// this or another space). Refused: an empty fingerprint, an empty vector, a non-finite
    /// value, and a dimension other than that of the fingerprint's other vectors.
    pub fn set_vector(
        &mut self,
        digest: &str,
        fingerprint: &str,
        vector: &[f32],
    ) -> Result<(), MediaError> {
        const OP: &str = "set vector";
        check_digest(digest)?;
        let invalid = |reason: &str| MediaError::InvalidVector {
            digest: digest.to_owned(),
            reason: reason.to_owned(),
        };
        if fingerprint.trim().is_empty() {
            return Err(invalid("empty fingerprint"));
        }
        if vector.is_empty() {
            return Err(invalid("empty vector"));
        }
        if let Some(i) = vector.iter().position(|v| !v.is_finite()) {
            return Err(invalid(&format!("value {i} is not finite")));
        }
        let path = &self.db_path;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .ctx(OP, path)?;
        let exists = tx
            .query_row(
                "SELECT 1 FROM media WHERE digest = ?1",
                [digest],
                |_| Ok(()),
            )
            .optional()
            .ctx(OP, path)?
            .is_some();
        if !exists {
            return Err(MediaError::NotFound {
                digest: digest.to_owned(),
            });
        }
        let other_dim: Option<i64> = tx
            .query_row(
                "SELECT vec_dim FROM media WHERE vec_model = ?1 AND digest <> ?2 LIMIT 1",
                [fingerprint, digest],
                |r| r.get(0),
            )
            .optional()
            .ctx(OP, path)?;
        if let Some(expected) = other_dim
            && expected as usize != vector.len()
        {
            return Err(MediaError::DimensionMismatch {
                digest: digest.to_owned(),
                fingerprint: fingerprint.to_owned(),
                expected: expected as usize,
                got: vector.len(),
            });
        }
        tx.execute(
            "UPDATE media SET vec_model = ?2, vec_dim = ?3, vector = ?4 WHERE digest = ?1",
            params![digest, fingerprint, vector.len() as i64, encode(vector)],
        )
        .ctx(OP, path)?;
        tx.commit().ctx(OP, path)
    }

    /// Removes the vector of `digest`, if it has one.
    pub fn clear_vector(&mut self, digest: &str) -> Result<(), MediaError> {
        check_digest(digest)?;
        let n = self
            .conn
            .execute(
                "UPDATE media SET vec_model = NULL, vec_dim = NULL, vector = NULL
                 WHERE digest = ?1",
                [digest],
            )
            .ctx("clear vector", &self.db_path)?;
        if n == 0 {
            return Err(MediaError::NotFound {
                digest: digest.to_owned(),
            });
        }
        Ok(())
    }

    /// Every vector in the space `fingerprint`, as `(digest, vector)` ordered by digest. Items
    /// with a vector of another space, or none, are left out.
    pub fn vectors(&self, fingerprint: &str) -> Result<Vec<(String, Vec<f32>)>, MediaError> {
        const OP: &str = "vectors";
        let path = &self.db_path;
        let mut stmt = self
            .conn
            .prepare(
                "SELECT digest, vec_dim, vector FROM media WHERE vec_model = ?1 ORDER BY digest",
            )
            .ctx(OP, path)?;
        let rows = stmt
            .query_map([fingerprint], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Vec<u8>>(2)?,
                ))
            })
            .ctx(OP, path)?;
        let mut out = Vec::new();
        for row in rows {
            let (digest, dim, blob) = row.ctx(OP, path)?;
            let vector = decode(&blob)
                .filter(|v| v.len() as i64 == dim)
                .ok_or_else(|| MediaError::Sqlite {
                    op: OP,
                    path: path.clone(),
                    detail: format!("vector of {digest} is {} bytes, not 4 × {dim}", blob.len()),
                })?;
            out.push((digest, vector));
        }
        Ok(out)
    }

    /// Digests of the `kinds` items (all items if `kinds` is empty) with no vector in the space
    /// `fingerprint`: none at all, or one of another space. The kernel re-embeds these when
    /// the image model changes.
    pub fn stale_vectors(
        &self,
        fingerprint: &str,
        kinds: &[crate::MediaKind],
    ) -> Result<Vec<String>, MediaError> {
        const OP: &str = "stale vectors";
        let path = &self.db_path;
        let mut stmt = self
            .conn
            .prepare(
                "SELECT digest, kind FROM media
                 WHERE vec_model IS NULL OR vec_model <> ?1 ORDER BY digest",
            )
            .ctx(OP, path)?;
        let rows = stmt
            .query_map([fingerprint], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .ctx(OP, path)?;
        let mut out = Vec::new();
        for row in rows {
            let (digest, kind) = row.ctx(OP, path)?;
            if kinds.is_empty() || kinds.iter().any(|k| k.as_str() == kind) {
                out.push(digest);
            }
        }
        Ok(out)
    }
}
