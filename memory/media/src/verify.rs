//! A full check of the store: every blob re-hashed against its row, and blob files without a
//! row listed. It never deletes or repairs; it reports, for a `stats`-like command.

use std::collections::HashSet;

use crate::blob::BlobState;
use crate::error::SqlContext;
use crate::{MediaError, MediaStore, VerifyReport};

impl MediaStore {
    /// Re-hashes every blob and reports corrupted, missing and orphaned ones. Blobs are hashed
    /// in chunks, so this needs little memory however large they are.
    pub fn verify_all(&self) -> Result<VerifyReport, MediaError> {
        const OP: &str = "verify";
        let path = &self.db_path;
        let mut stmt = self
            .conn
            .prepare("SELECT digest, bytes FROM media ORDER BY digest")
            .ctx(OP, path)?;
        let rows: Vec<(String, i64)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .ctx(OP, path)?
            .collect::<Result<_, _>>()
            .ctx(OP, path)?;
        let mut report = VerifyReport::default();
        for (digest, bytes) in &rows {
            match self.blobs.check(digest, *bytes as u64)? {
                BlobState::Intact => {
                    report.checked += 1;
                    report.bytes += *bytes as u64;
                }
                BlobState::Corrupted => {
                    report.checked += 1;
                    report.corrupted.push(digest.clone());
                }
                BlobState::Missing => report.missing.push(digest.clone()),
            }
        }
        let known: HashSet<&str> = rows.iter().map(|(d, _)| d.as_str()).collect();
        let mut orphans: Vec<String> = self
            .blobs
            .list()?
            .into_iter()
            .filter(|d| !known.contains(d.as_str()))
            .collect();
        orphans.sort();
        report.orphans = orphans;
        if !report.is_clean() {
            tracing::warn!(
                root = %self.blobs.root().display(),
                corrupted = report.corrupted.len(),
                missing = report.missing.len(),
                orphans = report.orphans.len(),
                "media store is damaged"
            );
        }
        Ok(report)
    }
}
