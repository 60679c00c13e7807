//! Shared fixtures: a knowledge base in a temporary directory, a deterministic concept embedder
//! that counts its calls, and helpers to edit files behind the knowledge base's back.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use hearth_knowledge::{KnowledgeBase, KnowledgeHit};
use hearth_memory::{EmbedError, Embedder, Fingerprint, Pooling, l2_normalize};

pub struct TestKb {
    pub kb: KnowledgeBase,
    pub root: PathBuf,
    pub index: PathBuf,
    /// Kept so the directory lives as long as the knowledge base.
    pub dir: tempfile::TempDir,
}

/// A knowledge base under a fresh temporary directory.
pub fn open(embedder: Option<Arc<dyn Embedder>>) -> TestKb {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("knowledge");
    let index = dir.path().join("knowledge.db");
    let kb = KnowledgeBase::open(&root, &index, embedder).expect("open knowledge base");
    let root = kb.root().to_path_buf();
    TestKb {
        kb,
        root,
        index,
        dir,
    }
}

impl TestKb {
    /// Closes and opens the same knowledge base again.
    pub fn reopen(&mut self, embedder: Option<Arc<dyn Embedder>>) {
        let kb = KnowledgeBase::open(&self.root, &self.index, embedder).expect("reopen");
        self.kb = kb;
    }

    pub fn names(&mut self, query: &str) -> Vec<String> {
        names(&self.kb.search(query, 10).expect("search"))
    }

    pub fn listed(&mut self) -> Vec<String> {
        self.kb
            .list()
            .expect("list")
            .into_iter()
            .map(|d| d.name)
            .collect()
    }

    /// The `content.md` of `name`.
    pub fn file(&self, name: &str) -> PathBuf {
        self.root.join(name).join("content.md")
    }
}

pub fn names(hits: &[KnowledgeHit]) -> Vec<String> {
    hits.iter().map(|h| h.name.clone()).collect()
}

/// Writes `content` to `path` as an editor would (creating directories), and moves its
/// modification time `secs` seconds ahead so the change is visible even within the file
/// system's timestamp granularity.
pub fn write_on_disk(path: &Path, content: &[u8], secs: u64) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, content).expect("write");
    bump_mtime(path, secs);
}

pub fn bump_mtime(path: &Path, secs: u64) {
    let file = std::fs::File::options()
        .append(true)
        .open(path)
        .expect("open for mtime");
    file.set_modified(SystemTime::now() + Duration::from_secs(secs))
        .expect("set mtime");
}

/// Words of the same concept land on the same dimension; all other words on none, so a text
/// without a concept word is the zero vector and matches nothing by meaning.
pub const CONCEPTS: &[&[&str]] = &[
    &["car", "automobile", "vehicle", "汽车"],
    &["bread", "loaf", "sourdough", "面包"],
    &["trip", "journey", "travel", "旅行"],
    &["doctor", "physician", "医生"],
];

/// A deterministic embedder over [`CONCEPTS`] that counts the texts it embeds (queries apart).
pub struct ConceptEmbedder {
    fingerprint: Fingerprint,
    pub texts: AtomicUsize,
    pub queries: AtomicUsize,
}

impl ConceptEmbedder {
    pub fn new(sha: &str) -> Arc<ConceptEmbedder> {
        Arc::new(ConceptEmbedder {
            fingerprint: Fingerprint::new("concepts", sha, CONCEPTS.len(), Pooling::Mean)
                .expect("fingerprint"),
            texts: AtomicUsize::new(0),
            queries: AtomicUsize::new(0),
        })
    }

    pub fn texts(&self) -> usize {
        self.texts.load(Ordering::SeqCst)
    }

    fn vector(text: &str) -> Vec<f32> {
        let terms = hearth_memory::search_terms(text);
        let mut v: Vec<f32> = CONCEPTS
            .iter()
            .map(|words| terms.iter().filter(|t| words.contains(&t.as_str())).count() as f32)
            .collect();
        l2_normalize(&mut v);
        v
    }
}

impl Embedder for ConceptEmbedder {
    fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        CONCEPTS.len()
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts.iter().map(|t| Self::vector(t)).collect())
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.queries.fetch_add(1, Ordering::SeqCst);
        Ok(Self::vector(text))
    }
}

/// An embedder that always fails, for checking the keyword fallback of indexing.
pub struct FailingEmbedder {
    fingerprint: Fingerprint,
}

impl FailingEmbedder {
    pub fn new() -> Arc<FailingEmbedder> {
        Arc::new(FailingEmbedder {
            fingerprint: Fingerprint::new("failing", "0123456789ab", 4, Pooling::Mean)
                .expect("fingerprint"),
        })
    }
}

impl Embedder for FailingEmbedder {
    fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        4
    }

    fn embed_batch(&self, _texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Err(EmbedError::Output {
            message: "the test model is broken".to_owned(),
        })
    }
}

/// Every file and directory under `dir`, relative, sorted.
pub fn tree_of(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read dir") {
            let path = entry.expect("entry").path();
            out.push(
                path.strip_prefix(dir)
                    .expect("under dir")
                    .to_string_lossy()
                    .into_owned(),
            );
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

pub fn count(index: &Path, sql: &str) -> i64 {
    let conn =
        rusqlite::Connection::open_with_flags(index, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("read-only connection");
    conn.query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}
