//! The graph's one SQLite file and its single owner, [`GraphStore`].
//!
//! WAL with `synchronous = FULL`, foreign keys on, the file created `0600` (the WAL and shared
//! memory files inherit its mode). Every write is one transaction; see `memory/graph/DESIGN.md`
//! for the schema and how facts move through their lifetime.

mod edit;
mod entities;
mod facts;
mod forget;
mod model;
mod review;
mod schema;
mod select;
mod stats;
mod unsaid;
mod unsynced;

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use hearth_engine::LocalZone;
use hearth_memory::Embedder;
use rusqlite::{Connection, OpenFlags};

use crate::GraphError;
use crate::error::SqlContext;

pub use edit::RelationParts;
pub(crate) use entities::find_entity as find_entity_in;
pub(crate) use facts::tell_in as facts_tell_in;
pub use forget::{Forgotten, Provenance, PurgeCriteria, ShownIn, SourceSentence};
pub use model::{EventSpec, Fact, FactId, FactMode, FactSource, FactStatus, Statement, TellReport};
pub use review::{MergeCandidate, ReviewItem, bigram_jaccard};
pub use schema::{GRAPH_APPLICATION_ID, GRAPH_SCHEMA_VERSION};
pub use stats::GraphStats;
pub use unsaid::{StillSaid, Unsaid};

/// How long a write waits for a reader's lock before failing.
pub const GRAPH_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The owner of one graph file. Not `Clone` and not shared: the kernel holds one, on the
/// memory service thread, and every mutation goes through its typed methods.
pub struct GraphStore {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    pub(crate) embedder: Option<Arc<dyn Embedder>>,
    /// The user's zone: a query's "yesterday" is their yesterday.
    pub(crate) zone: LocalZone,
}

impl std::fmt::Debug for GraphStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphStore")
            .field("path", &self.path)
            .field(
                "embedder",
                &self.embedder.as_ref().map(|e| e.fingerprint().to_string()),
            )
            .field("zone", &self.zone)
            .finish()
    }
}

impl GraphStore {
    /// Opens (creating, mode `0600`, when missing) the graph at `path` and applies pending
    /// migrations. A file that is not a Hearth graph or comes from a newer Hearth is refused
    /// and left untouched.
    pub fn open(path: impl AsRef<Path>) -> Result<GraphStore, GraphError> {
        const OP: &str = "open";
        let path = path.as_ref().to_path_buf();
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
            .map_err(|source| GraphError::Io {
                op: OP,
                path: path.clone(),
                source,
            })?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&path, flags).ctx(OP, &path)?;
        conn.busy_timeout(GRAPH_BUSY_TIMEOUT).ctx(OP, &path)?;
        hearth_memory::keep_statements(&conn).ctx(OP, &path)?;
        let version = schema::check_identity(&conn, &path)?;
        if let Some(detail) = hearth_memory::switch_to_wal(&conn).ctx(OP, &path)? {
            return Err(GraphError::Sqlite {
                op: OP,
                path,
                detail,
            });
        }
        conn.pragma_update(None, "synchronous", "FULL")
            .ctx(OP, &path)?;
        conn.pragma_update(None, "foreign_keys", true)
            .ctx(OP, &path)?;
        // A forgotten fact's bytes must not linger in freed pages of the file.
        conn.pragma_update(None, "secure_delete", true)
            .ctx(OP, &path)?;
        schema::migrate(&mut conn, &path, version)?;
        Ok(GraphStore {
            conn,
            path,
            embedder: None,
            zone: LocalZone::default(),
        })
    }

    /// Sets the dense embedder whose space facts are indexed in and queries searched in.
    /// Vectors of another fingerprint stay stored but are never compared with this one's.
    pub fn set_embedder(&mut self, embedder: Option<Arc<dyn Embedder>>) {
        self.embedder = embedder;
    }

    /// Sets the user's zone (UTC until set), in which recall reckons the time words of a query
    /// at the time it is asked. A statement's are reckoned in the zone its [`ColdItem`]
    /// carries.
    ///
    /// [`ColdItem`]: crate::ColdItem
    pub fn set_zone(&mut self, zone: LocalZone) {
        self.zone = zone;
    }

    /// The user's zone set with [`GraphStore::set_zone`]: for showing a fact's days as they
    /// were where the user is, and for dating what they said.
    pub fn zone(&self) -> &LocalZone {
        &self.zone
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Copies the WAL into the database file (for a clean shutdown or a backup).
    pub fn checkpoint(&mut self) -> Result<(), GraphError> {
        self.conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .ctx("checkpoint", &self.path)
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }
}

/// Milliseconds since the Unix epoch by the system clock: when Hearth recorded something.
pub(crate) use hearth_engine::now_ms;
