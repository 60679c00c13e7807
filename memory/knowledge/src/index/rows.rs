//! Reading and writing the index's rows. Every write is one transaction, so a document is
//! always wholly in its old or its new state.

use std::path::Path;

use rusqlite::{OptionalExtension, Row, Transaction, params};

use super::Index;
use crate::KnowledgeError;
use crate::error::SqlContext;
use crate::vector::{from_blob, to_blob};

/// What the sync compares to tell whether a file changed: its modification time and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stat {
    /// Nanoseconds since the Unix epoch.
    pub(crate) mtime_ns: i64,
    /// Bytes.
    pub(crate) size: u64,
}

/// One document as the index knows it.
#[derive(Clone, Debug)]
pub(crate) struct DocRow {
    pub(crate) id: i64,
    pub(crate) name: String,
    pub(crate) stat: Stat,
    /// The content hash, `None` when skipped.
    pub(crate) hash: Option<i64>,
    pub(crate) skipped: Option<String>,
    pub(crate) vector_fp: Option<String>,
}

/// A passage about to be stored.
pub(crate) struct NewPassage<'a> {
    pub(crate) text: &'a str,
    pub(crate) tokens: String,
    pub(crate) vector: Option<Vec<f32>>,
}

const DOC_COLUMNS: &str = "id, name, mtime_ns, size, hash, skipped, vector_fp";

fn doc_row(r: &Row<'_>) -> rusqlite::Result<DocRow> {
    Ok(DocRow {
        id: r.get(0)?,
        name: r.get(1)?,
        stat: Stat {
            mtime_ns: r.get(2)?,
            size: u64::try_from(r.get::<_, i64>(3)?).unwrap_or(0),
        },
        hash: r.get(4)?,
        skipped: r.get(5)?,
        vector_fp: r.get(6)?,
    })
}

fn size_param(stat: Stat) -> i64 {
    i64::try_from(stat.size).unwrap_or(i64::MAX)
}

/// The columns of a document row besides its name.
struct DocState<'a> {
    stat: Stat,
    hash: Option<i64>,
    skipped: Option<&'a str>,
    vector_fp: Option<&'a str>,
}

/// Inserts or updates the document row of `name`; returns its id.
fn upsert_doc(
    tx: &Transaction<'_>,
    path: &Path,
    op: &'static str,
    name: &str,
    state: DocState<'_>,
) -> Result<i64, KnowledgeError> {
    let DocState {
        stat,
        hash,
        skipped,
        vector_fp,
    } = state;
    tx.prepare_cached(
        "INSERT INTO docs (name, mtime_ns, size, hash, skipped, vector_fp) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
         ON CONFLICT (name) DO UPDATE SET mtime_ns = excluded.mtime_ns, size = excluded.size, \
         hash = excluded.hash, skipped = excluded.skipped, vector_fp = excluded.vector_fp \
         RETURNING id",
    )
    .ctx(op, path)?
    .query_row(
        params![
            name,
            stat.mtime_ns,
            size_param(stat),
            hash,
            skipped,
            vector_fp
        ],
        |r| r.get(0),
    )
    .ctx(op, path)
}

fn delete_passages(
    tx: &Transaction<'_>,
    path: &Path,
    op: &'static str,
    doc_id: i64,
) -> Result<(), KnowledgeError> {
    tx.prepare_cached("DELETE FROM passages WHERE doc_id = ?1")
        .ctx(op, path)?
        .execute([doc_id])
        .ctx(op, path)?;
    Ok(())
}

impl Index {
    /// Every document, by name.
    pub(crate) fn docs(&self) -> Result<Vec<DocRow>, KnowledgeError> {
        const OP: &str = "list";
        let mut stmt = self
            .conn()
            .prepare_cached(&format!("SELECT {DOC_COLUMNS} FROM docs ORDER BY name"))
            .ctx(OP, self.path())?;
        stmt.query_map([], doc_row)
            .ctx(OP, self.path())?
            .collect::<Result<Vec<_>, _>>()
            .ctx(OP, self.path())
    }

    /// The document named `name`, if indexed.
    pub(crate) fn doc(&self, name: &str) -> Result<Option<DocRow>, KnowledgeError> {
        const OP: &str = "find";
        self.conn()
            .prepare_cached(&format!("SELECT {DOC_COLUMNS} FROM docs WHERE name = ?1"))
            .ctx(OP, self.path())?
            .query_row([name], doc_row)
            .optional()
            .ctx(OP, self.path())
    }

    /// Stores `name` as indexed with `passages`, replacing whatever it had.
    pub(crate) fn put_indexed(
        &mut self,
        name: &str,
        stat: Stat,
        hash: i64,
        passages: &[NewPassage<'_>],
        vector_fp: Option<&str>,
    ) -> Result<(), KnowledgeError> {
        const OP: &str = "index document";
        self.write(OP, |tx, path| {
            let state = DocState {
                stat,
                hash: Some(hash),
                skipped: None,
                vector_fp,
            };
            let id = upsert_doc(tx, path, OP, name, state)?;
            delete_passages(tx, path, OP, id)?;
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO passages (doc_id, ord, text, tokens, vector) \
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .ctx(OP, path)?;
            for (ord, p) in passages.iter().enumerate() {
                let vector = p.vector.as_deref().map(to_blob);
                insert
                    .execute(params![id, ord as i64, p.text, p.tokens, vector])
                    .ctx(OP, path)?;
            }
            Ok(())
        })
    }

    /// Stores `name` as skipped for `reason`, without passages.
    pub(crate) fn put_skipped(
        &mut self,
        name: &str,
        stat: Stat,
        reason: &str,
    ) -> Result<(), KnowledgeError> {
        const OP: &str = "record skipped document";
        self.write(OP, |tx, path| {
            let state = DocState {
                stat,
                hash: None,
                skipped: Some(reason),
                vector_fp: None,
            };
            let id = upsert_doc(tx, path, OP, name, state)?;
            delete_passages(tx, path, OP, id)
        })
    }

    /// Records a new stat for a document whose content did not change (a touched file).
    pub(crate) fn set_stat(&mut self, id: i64, stat: Stat) -> Result<(), KnowledgeError> {
        const OP: &str = "update stat";
        self.write(OP, |tx, path| {
            tx.prepare_cached("UPDATE docs SET mtime_ns = ?2, size = ?3 WHERE id = ?1")
                .ctx(OP, path)?
                .execute(params![id, stat.mtime_ns, size_param(stat)])
                .ctx(OP, path)?;
            Ok(())
        })
    }

    /// The passages of a document as `(passage id, text)`, in order.
    pub(crate) fn passage_texts(&self, doc_id: i64) -> Result<Vec<(i64, String)>, KnowledgeError> {
        const OP: &str = "read passages";
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT id, text FROM passages WHERE doc_id = ?1 ORDER BY ord")
            .ctx(OP, self.path())?;
        stmt.query_map([doc_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .ctx(OP, self.path())?
            .collect::<Result<Vec<_>, _>>()
            .ctx(OP, self.path())
    }

    /// Replaces a document's vectors with `vectors` (one per passage id) made by `fp`.
    pub(crate) fn set_vectors(
        &mut self,
        doc_id: i64,
        fp: &str,
        vectors: &[(i64, Vec<f32>)],
    ) -> Result<(), KnowledgeError> {
        const OP: &str = "store vectors";
        self.write(OP, |tx, path| {
            let mut update = tx
                .prepare_cached("UPDATE passages SET vector = ?2 WHERE id = ?1 AND doc_id = ?3")
                .ctx(OP, path)?;
            for (id, v) in vectors {
                update
                    .execute(params![id, to_blob(v), doc_id])
                    .ctx(OP, path)?;
            }
            tx.prepare_cached("UPDATE docs SET vector_fp = ?2 WHERE id = ?1")
                .ctx(OP, path)?
                .execute(params![doc_id, fp])
                .ctx(OP, path)?;
            Ok(())
        })
    }

    /// Removes a document and its passages.
    pub(crate) fn remove(&mut self, doc_id: i64) -> Result<(), KnowledgeError> {
        const OP: &str = "remove document";
        self.write(OP, |tx, path| {
            // Explicitly first, so the FTS delete trigger sees each passage.
            delete_passages(tx, path, OP, doc_id)?;
            tx.prepare_cached("DELETE FROM docs WHERE id = ?1")
                .ctx(OP, path)?
                .execute([doc_id])
                .ctx(OP, path)?;
            Ok(())
        })
    }

    /// Passages matching the FTS5 expression `fts_query`, best (lowest `bm25`) first, as
    /// `(doc id, passage id)`.
    pub(crate) fn keyword_matches(
        &self,
        fts_query: &str,
        limit: usize,
    ) -> Result<Vec<(i64, i64)>, KnowledgeError> {
        const OP: &str = "keyword search";
        let mut stmt = self
            .conn()
            .prepare_cached(
                "SELECT p.doc_id, p.id FROM passages_fts f JOIN passages p ON p.id = f.rowid \
                 WHERE passages_fts MATCH ?1 ORDER BY bm25(passages_fts), p.id LIMIT +?2",
            )
            .ctx(OP, self.path())?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        stmt.query_map(params![fts_query, limit], |r| Ok((r.get(0)?, r.get(1)?)))
            .ctx(OP, self.path())?
            .collect::<Result<Vec<_>, _>>()
            .ctx(OP, self.path())
    }

    /// Every passage vector made by `fp`, as `(doc id, passage id, vector)`.
    pub(crate) fn vectors(&self, fp: &str) -> Result<Vec<(i64, i64, Vec<f32>)>, KnowledgeError> {
        const OP: &str = "read vectors";
        let mut stmt = self
            .conn()
            .prepare_cached(
                "SELECT p.doc_id, p.id, p.vector FROM passages p JOIN docs d ON d.id = p.doc_id \
                 WHERE d.vector_fp = ?1 AND p.vector IS NOT NULL ORDER BY p.id",
            )
            .ctx(OP, self.path())?;
        stmt.query_map([fp], |r| {
            Ok((r.get(0)?, r.get(1)?, from_blob(&r.get::<_, Vec<u8>>(2)?)))
        })
        .ctx(OP, self.path())?
        .collect::<Result<Vec<_>, _>>()
        .ctx(OP, self.path())
    }

    /// The text of one passage.
    pub(crate) fn passage_text(&self, passage_id: i64) -> Result<String, KnowledgeError> {
        const OP: &str = "read passage";
        self.conn()
            .prepare_cached("SELECT text FROM passages WHERE id = ?1")
            .ctx(OP, self.path())?
            .query_row([passage_id], |r| r.get(0))
            .ctx(OP, self.path())
    }

    /// The name of a document by id.
    pub(crate) fn doc_name(&self, doc_id: i64) -> Result<String, KnowledgeError> {
        const OP: &str = "read document";
        self.conn()
            .prepare_cached("SELECT name FROM docs WHERE id = ?1")
            .ctx(OP, self.path())?
            .query_row([doc_id], |r| r.get(0))
            .ctx(OP, self.path())
    }
}
