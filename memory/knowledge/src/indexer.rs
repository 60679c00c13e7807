//! Turning one document's text into index rows: passages, their search tokens, their vectors.

use std::io::Read;
use std::path::Path;

use hearth_memory::{MAX_BATCH, index_tokens, split_passages};

use crate::KnowledgeBase;
use crate::KnowledgeError;
use crate::index::{NewPassage, Stat};
use crate::limits::{MAX_DOCUMENT_BYTES, PASSAGE_CHARS};
use crate::vector::content_hash;

/// A document file's content, or why it is not indexed.
pub(crate) enum Content {
    /// The text and its hash.
    Text(String, i64),
    /// The reason it is skipped.
    Skip(String),
}

/// Reads `file` (of `size` bytes by its last stat) within the size limit. Never fails: what
/// cannot be read is a skip, shown by `list`, not an error that would stop the whole sync.
pub(crate) fn read_content(file: &Path, size: u64) -> Content {
    if size > MAX_DOCUMENT_BYTES {
        return Content::Skip(too_large(size));
    }
    let mut bytes = Vec::new();
    // `take` because the file may have grown since the stat.
    let read = std::fs::File::open(file)
        .and_then(|f| f.take(MAX_DOCUMENT_BYTES + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        return Content::Skip(format!("cannot read: {e}"));
    }
    if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
        return Content::Skip(too_large(bytes.len() as u64));
    }
    let hash = content_hash(&bytes);
    match String::from_utf8(bytes) {
        Ok(text) => Content::Text(text, hash),
        Err(e) => Content::Skip(format!(
            "not UTF-8 text (invalid bytes at offset {})",
            e.utf8_error().valid_up_to()
        )),
    }
}

fn too_large(bytes: u64) -> String {
    format!("larger than 1 MiB ({bytes} bytes)")
}

/// The passages of `text`; an empty document still has one (empty) passage, so it can be found
/// by its name.
fn passages(text: &str) -> Vec<&str> {
    let mut out = split_passages(text, PASSAGE_CHARS);
    if out.is_empty() {
        out.push("");
    }
    out
}

/// The search tokens of a name: its segments' words (`recipes/sour-dough` → recipes sour dough).
fn name_tokens(name: &str) -> String {
    index_tokens(&name.replace(['/', '-', '_', '.'], " "))
}

/// Whether a document got vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Embedded {
    /// There is no embedder.
    NoEmbedder,
    /// Every passage has a vector.
    Yes,
    /// The embedder failed; the document is indexed by keywords and retried next sync.
    Failed,
}

impl KnowledgeBase {
    /// Indexes `name` with `text`, replacing what the index had for it.
    pub(crate) fn index_text(
        &mut self,
        name: &str,
        stat: Stat,
        text: &str,
        hash: i64,
    ) -> Result<Embedded, KnowledgeError> {
        let pieces = passages(text);
        let (vectors, embedded) = self.embed_texts(name, &pieces);
        let mut vectors = vectors.map(Vec::into_iter);
        // The name's words go with the first passage only: once is enough to find the document
        // by its name, and more would weigh the name above the text in every passage.
        let rows: Vec<NewPassage<'_>> = pieces
            .iter()
            .enumerate()
            .map(|(i, &piece)| {
                let mut tokens = index_tokens(piece);
                if i == 0 {
                    let name = name_tokens(name);
                    tokens = if tokens.is_empty() {
                        name
                    } else {
                        format!("{name} {tokens}")
                    };
                }
                NewPassage {
                    text: piece,
                    tokens,
                    vector: vectors.as_mut().and_then(Iterator::next),
                }
            })
            .collect();
        let fp = self.fingerprint().filter(|_| embedded == Embedded::Yes);
        self.index
            .put_indexed(name, stat, hash, &rows, fp.as_deref())?;
        self.dense = None;
        Ok(embedded)
    }

    /// Recomputes the vectors of an indexed document from its stored passages (after the
    /// embedder changed).
    pub(crate) fn reembed(&mut self, doc_id: i64, name: &str) -> Result<Embedded, KnowledgeError> {
        let passages = self.index.passage_texts(doc_id)?;
        let texts: Vec<&str> = passages.iter().map(|(_, t)| t.as_str()).collect();
        let (vectors, embedded) = self.embed_texts(name, &texts);
        let (Some(vectors), Some(fp)) = (vectors, self.fingerprint()) else {
            return Ok(embedded);
        };
        let rows: Vec<(i64, Vec<f32>)> = passages.iter().map(|(id, _)| *id).zip(vectors).collect();
        self.index.set_vectors(doc_id, &fp, &rows)?;
        self.dense = None;
        Ok(Embedded::Yes)
    }

    /// The current embedder's fingerprint as stored.
    pub(crate) fn fingerprint(&self) -> Option<String> {
        self.embedder.as_ref().map(|e| e.fingerprint().to_string())
    }

    /// Vectors of `texts` when the embedder gives them. A failure (or a vector of the wrong size
    /// or with non-finite entries) is logged and reported as [`Embedded::Failed`]: it must not
    /// stop the document from being indexed by keywords.
    fn embed_texts(&mut self, name: &str, texts: &[&str]) -> (Option<Vec<Vec<f32>>>, Embedded) {
        let Some(embedder) = self.embedder.clone() else {
            return (None, Embedded::NoEmbedder);
        };
        let dim = embedder.dim();
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(MAX_BATCH) {
            let problem = match embedder.embed_batch(chunk) {
                Ok(rows) if rows.len() != chunk.len() => {
                    Some(format!("{} vectors for {} texts", rows.len(), chunk.len()))
                }
                Ok(rows) => match rows
                    .iter()
                    .find(|v| v.len() != dim || !v.iter().all(|x| x.is_finite()))
                {
                    Some(v) => Some(format!(
                        "a vector of {} entries (expected {dim}) or with non-finite entries",
                        v.len()
                    )),
                    None => {
                        out.extend(rows);
                        None
                    }
                },
                Err(e) => Some(e.to_string()),
            };
            if let Some(problem) = problem {
                let message = format!("embedding failed, indexed by keywords only: {problem}");
                self.warn_once(name, &message);
                return (None, Embedded::Failed);
            }
        }
        (Some(out), Embedded::Yes)
    }
}
