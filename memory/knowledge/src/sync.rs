//! Bringing the index up to date with the files.
//!
//! The rule: a document whose `content.md` has the (mtime, size) the index recorded is
//! unchanged, and is not read. Otherwise the file is read and its content hash compared: the
//! same hash (a `touch`, an editor saving without changes) only records the new stat, a new one
//! re-indexes the document. A document the walk no longer finds is removed. A document whose
//! vectors were made by another embedder (or none) is re-embedded from its stored passages,
//! without reading the file.

use std::collections::HashMap;

use crate::index::DocRow;
use crate::indexer::{Content, Embedded, read_content};
use crate::limits::MAX_DOCUMENTS;
use crate::walk::{Found, Skipped, walk};
use crate::{KnowledgeBase, KnowledgeError};

/// What one [`sync`](KnowledgeBase::sync) did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Documents indexed for the first time.
    pub added: usize,
    /// Documents whose content changed and were re-indexed.
    pub updated: usize,
    /// Documents whose file is gone, removed from the index.
    pub removed: usize,
    /// Indexed documents left as they were (including touched files of unchanged content).
    pub unchanged: usize,
    /// Documents whose vectors were computed (added, updated, or re-embedded for a new
    /// embedder).
    pub embedded: usize,
    /// Documents the embedder failed on: indexed by keywords only, retried by the next sync.
    pub embed_failures: usize,
    /// Documents and directories not indexed, with why (every one, not only new ones).
    pub skipped: Vec<Skipped>,
    /// Whether the walk stopped at [`MAX_DOCUMENTS`]; documents past it are not indexed.
    pub truncated: bool,
}

impl KnowledgeBase {
    /// Brings the index up to date with the files under the root and returns what changed.
    /// When nothing did, this is one `stat` per document and one directory read per directory.
    pub fn sync(&mut self) -> Result<SyncReport, KnowledgeError> {
        let walk = walk(&self.root)?;
        let mut report = SyncReport {
            truncated: walk.truncated,
            ..SyncReport::default()
        };
        for skipped in &walk.skipped {
            self.warn_once(&skipped.path, &format!("not indexed: {}", skipped.reason));
        }
        if walk.truncated {
            let message = format!(
                "more than {MAX_DOCUMENTS} documents: only the first {MAX_DOCUMENTS} are indexed"
            );
            self.warn_once("", &message);
        }
        report.skipped = walk.skipped;
        let mut known: HashMap<String, DocRow> = self
            .index
            .docs()?
            .into_iter()
            .map(|row| (row.name.clone(), row))
            .collect();
        let fingerprint = self.fingerprint();
        for found in walk.found {
            let row = known.remove(&found.name);
            self.sync_one(found, row, fingerprint.as_deref(), &mut report)?;
        }
        for row in known.into_values() {
            self.index.remove(row.id)?;
            self.dense = None;
            report.removed += 1;
        }
        report.skipped.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(report)
    }

    fn sync_one(
        &mut self,
        found: Found,
        row: Option<DocRow>,
        fingerprint: Option<&str>,
        report: &mut SyncReport,
    ) -> Result<(), KnowledgeError> {
        if let Some(row) = row.as_ref().filter(|r| r.stat == found.stat) {
            if let Some(reason) = &row.skipped {
                report.skipped.push(skipped(&found.name, reason));
                return Ok(());
            }
            report.unchanged += 1;
            return self.reembed_if_stale(row, fingerprint, report);
        }
        match read_content(&found.file, found.stat.size) {
            Content::Skip(reason) => {
                if row.as_ref().and_then(|r| r.skipped.as_ref()) != Some(&reason) {
                    self.warn_once(&found.name, &format!("not indexed: {reason}"));
                }
                self.index.put_skipped(&found.name, found.stat, &reason)?;
                self.dense = None;
                report.skipped.push(skipped(&found.name, &reason));
            }
            Content::Text(text, hash) => match row {
                Some(row) if row.hash == Some(hash) => {
                    self.index.set_stat(row.id, found.stat)?;
                    report.unchanged += 1;
                    self.reembed_if_stale(&row, fingerprint, report)?;
                }
                row => {
                    let outcome = self.index_text(&found.name, found.stat, &text, hash)?;
                    count_embedding(outcome, report);
                    match row {
                        Some(_) => report.updated += 1,
                        None => report.added += 1,
                    }
                }
            },
        }
        Ok(())
    }
}

impl KnowledgeBase {
    /// Re-embeds an unchanged document whose vectors are not the current embedder's.
    fn reembed_if_stale(
        &mut self,
        row: &DocRow,
        fingerprint: Option<&str>,
        report: &mut SyncReport,
    ) -> Result<(), KnowledgeError> {
        if fingerprint.is_some() && row.vector_fp.as_deref() != fingerprint {
            let outcome = self.reembed(row.id, &row.name)?;
            count_embedding(outcome, report);
        }
        Ok(())
    }
}

fn skipped(name: &str, reason: &str) -> Skipped {
    Skipped {
        path: name.to_owned(),
        reason: reason.to_owned(),
    }
}

fn count_embedding(outcome: Embedded, report: &mut SyncReport) {
    match outcome {
        Embedded::Yes => report.embedded += 1,
        Embedded::Failed => report.embed_failures += 1,
        Embedded::NoEmbedder => {}
    }
}
