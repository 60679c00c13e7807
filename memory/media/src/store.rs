//! [`MediaStore`]: the single owner of one media directory, its `media.db` and its blobs.
//!
//! The database is WAL with `synchronous = FULL` and is created `0600` (its WAL and shared
//! memory files inherit the mode). A blob is written before its row and removed before its
//! row is, so the only states a crash can leave are ones the next `put` or `delete` of the same
//! content completes (see `memory/media/DESIGN.md`).

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use crate::blob::{BlobState, Blobs, make_dir};
use crate::digest::{check_digest, digest_of};
use crate::error::{IoContext, SqlContext};
use crate::{MediaError, MediaInfo, MediaKind, MediaMeta, Stored, schema};

/// How long a write waits for a reader's lock before failing.
pub const MEDIA_BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// The default largest blob `put` accepts: 64 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// The database file's name inside the media directory.
pub const DB_FILE: &str = "media.db";
/// The blob tree's name inside the media directory.
pub const BLOBS_DIR: &str = "blobs";

/// Fewest hex characters [`MediaStore::resolve`] takes: the twelve a marker shows.
pub const MIN_DIGEST_PREFIX: usize = 12;

/// The owner of one media directory. Not `Clone` and not shared: the kernel holds one, and
/// every mutation goes through its `&mut self` methods.
#[derive(Debug)]
pub struct MediaStore {
    pub(crate) conn: Connection,
    pub(crate) db_path: PathBuf,
    pub(crate) dir: PathBuf,
    pub(crate) blobs: Blobs,
    max_bytes: u64,
}

/// The bytes of item `digest` of the media store at `dir`, read without its database: for a
/// reader on another thread than the store's one writer (an LLM request showing an image).
/// Returned only if they hash to `digest`, so damage is an error and never wrong content.
pub fn read_blob(dir: impl AsRef<Path>, digest: &str) -> Result<Vec<u8>, MediaError> {
    check_digest(digest)?;
    Blobs::at(dir.as_ref().join(BLOBS_DIR)).read_unsized(digest)
}

impl MediaStore {
    /// Opens the media directory `dir`, creating it, `media.db` (`0600`) and `blobs/` (`0700`)
    /// when missing, applying pending migrations and removing `*.tmp` files left by an
    /// interrupted write. A `media.db` that is not a Hearth media store, or is from a newer
    /// Hearth, is refused as [`MediaError::Foreign`] and left untouched.
    pub fn open(dir: impl AsRef<Path>) -> Result<MediaStore, MediaError> {
        const OP: &str = "open";
        let dir = dir.as_ref().to_path_buf();
        make_dir(&dir)?;
        let db_path = dir.join(DB_FILE);
        // Created here rather than by SQLite so the mode is 0600 from the first byte.
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&db_path)
            .io(OP, &db_path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&db_path, flags).ctx(OP, &db_path)?;
        conn.busy_timeout(MEDIA_BUSY_TIMEOUT).ctx(OP, &db_path)?;
        // Identity first: switching to WAL would already rewrite a foreign file's header.
        let version = schema::check_identity(&conn, &db_path)?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .ctx(OP, &db_path)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(MediaError::Sqlite {
                op: OP,
                path: db_path,
                detail: format!("could not switch to WAL (journal_mode is {mode})"),
            });
        }
        conn.pragma_update(None, "synchronous", "FULL")
            .ctx(OP, &db_path)?;
        schema::migrate(&mut conn, &db_path, version)?;
        let blobs = Blobs::open(dir.join(BLOBS_DIR))?;
        let swept = blobs.sweep_tmp()?;
        if swept > 0 {
            tracing::warn!(dir = %dir.display(), swept, "media store: removed interrupted writes");
        }
        Ok(MediaStore {
            conn,
            db_path,
            dir,
            blobs,
            max_bytes: DEFAULT_MAX_BYTES,
        })
    }

    /// The media directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The database file.
    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    /// The largest blob `put` accepts, in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Sets the largest blob `put` accepts (at least 1 byte). Items already stored are kept.
    pub fn set_max_bytes(&mut self, limit: u64) {
        self.max_bytes = limit.max(1);
    }

    /// Where the blob of `digest` lives (whether or not it exists), for handing the file to a
    /// tool without copying it. Reading it directly skips verification; [`MediaStore::get`]
    /// verifies.
    pub fn blob_path(&self, digest: &str) -> Result<PathBuf, MediaError> {
        check_digest(digest)?;
        Ok(self.blobs.path(digest))
    }

    /// Stores `data` under its sha256 and records `meta`. Storing content already present
    /// writes no second blob: it refreshes `last_seen_ms` and fills in only the metadata
    /// fields that are still empty. A blob on disk that does not match its name (damage, or a
    /// write interrupted by a crash) is rewritten from `data`.
    pub fn put(&mut self, data: &[u8], meta: &MediaMeta) -> Result<Stored, MediaError> {
        const OP: &str = "put";
        if data.is_empty() {
            return Err(MediaError::Empty);
        }
        let bytes = data.len() as u64;
        if bytes > self.max_bytes {
            return Err(MediaError::TooLarge {
                bytes,
                limit: self.max_bytes,
            });
        }
        let digest = digest_of(data);
        match self.blobs.check(&digest, bytes)? {
            BlobState::Intact => {}
            state => {
                if state == BlobState::Corrupted {
                    tracing::warn!(%digest, "media put: rewriting a corrupted blob");
                }
                self.blobs.write(&digest, data)?;
            }
        }
        let mime = meta.mime.trim().to_ascii_lowercase();
        let kind = MediaKind::from_mime(&mime);
        let now = crate::now_ms();
        let path = &self.db_path;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .ctx(OP, path)?;
        let existed = tx
            .query_row("SELECT 1 FROM media WHERE digest = ?1", [&digest], |_| {
                Ok(())
            })
            .optional()
            .ctx(OP, path)?
            .is_some();
        // Known metadata is never overwritten. The description and its author go together:
        // filling only `described_by` would credit an existing description to someone else.
        tx.execute(
            "INSERT INTO media (digest, kind, mime, bytes, width, height, description,
                                described_by, created_ms, last_seen_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)
             ON CONFLICT (digest) DO UPDATE SET
                 last_seen_ms = max(last_seen_ms, excluded.last_seen_ms),
                 kind = CASE WHEN mime = '' THEN excluded.kind ELSE kind END,
                 mime = CASE WHEN mime = '' THEN excluded.mime ELSE mime END,
                 width = coalesce(width, excluded.width),
                 height = coalesce(height, excluded.height),
                 described_by = CASE WHEN description = '' AND excluded.description <> ''
                                     THEN excluded.described_by ELSE described_by END,
                 description = CASE WHEN description = ''
                                    THEN excluded.description ELSE description END",
            params![
                digest,
                kind.as_str(),
                mime,
                bytes as i64,
                meta.width.filter(|&w| w > 0),
                meta.height.filter(|&h| h > 0),
                meta.description.trim(),
                meta.described_by.trim(),
                now,
            ],
        )
        .ctx(OP, path)?;
        tx.commit().ctx(OP, path)?;
        Ok(Stored {
            digest,
            bytes,
            new: !existed,
        })
    }

    /// The bytes of `digest`, re-verified against the digest on every read: damage on disk is
    /// [`MediaError::Corrupted`], never wrong content.
    pub fn get(&self, digest: &str) -> Result<Vec<u8>, MediaError> {
        check_digest(digest)?;
        let bytes: i64 = self
            .conn
            .query_row("SELECT bytes FROM media WHERE digest = ?1", [digest], |r| {
                r.get(0)
            })
            .optional()
            .ctx("get", &self.db_path)?
            .ok_or_else(|| MediaError::NotFound {
                digest: digest.to_owned(),
            })?;
        self.blobs.read(digest, bytes as u64)
    }

    /// The full digest of the one item whose digest is `prefix` or begins with it (at least
    /// [`MIN_DIGEST_PREFIX`] lower-case hex characters, as a marker shows one): how a name a
    /// person or a model copied from a marker is checked against what the store holds.
    pub fn resolve(&self, prefix: &str) -> Result<String, MediaError> {
        const OP: &str = "resolve";
        let prefix = prefix.trim().trim_start_matches("sha256:");
        if prefix.len() < MIN_DIGEST_PREFIX
            || prefix.len() > crate::DIGEST_LEN
            || !crate::digest::is_lower_hex(prefix)
        {
            return Err(MediaError::InvalidDigest {
                digest: prefix.to_owned(),
            });
        }
        // Hex digits sort before 'g': every digest beginning with the prefix lies in
        // [prefix, prefix + "g"), a range of the primary key.
        let upper = format!("{prefix}g");
        let mut stmt = self
            .conn
            .prepare_cached("SELECT digest FROM media WHERE digest >= ?1 AND digest < ?2 LIMIT 2")
            .ctx(OP, &self.db_path)?;
        let found: Vec<String> = stmt
            .query_map([prefix, upper.as_str()], |r| r.get(0))
            .ctx(OP, &self.db_path)?
            .collect::<Result<_, _>>()
            .ctx(OP, &self.db_path)?;
        match found.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(MediaError::NotFound {
                digest: prefix.to_owned(),
            }),
            _ => Err(MediaError::Ambiguous {
                prefix: prefix.to_owned(),
            }),
        }
    }

    /// Everything known about `digest`, without reading its blob.
    pub fn meta(&self, digest: &str) -> Result<MediaInfo, MediaError> {
        const OP: &str = "meta";
        check_digest(digest)?;
        let row = self
            .conn
            .query_row(
                "SELECT kind, mime, bytes, width, height, description, described_by,
                        created_ms, last_seen_ms, vec_model, vec_dim
                 FROM media WHERE digest = ?1",
                [digest],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        MediaInfo {
                            digest: digest.to_owned(),
                            kind: MediaKind::Other,
                            mime: r.get(1)?,
                            bytes: r.get::<_, i64>(2)? as u64,
                            width: r.get(3)?,
                            height: r.get(4)?,
                            description: r.get(5)?,
                            described_by: r.get(6)?,
                            created_ms: r.get(7)?,
                            last_seen_ms: r.get(8)?,
                            vector: match (
                                r.get::<_, Option<String>>(9)?,
                                r.get::<_, Option<i64>>(10)?,
                            ) {
                                (Some(fp), Some(dim)) => Some((fp, dim as usize)),
                                _ => None,
                            },
                        },
                    ))
                },
            )
            .optional()
            .ctx(OP, &self.db_path)?;
        let (kind, mut info) = row.ok_or_else(|| MediaError::NotFound {
            digest: digest.to_owned(),
        })?;
        info.kind = MediaKind::parse(&kind).ok_or_else(|| MediaError::Sqlite {
            op: OP,
            path: self.db_path.clone(),
            detail: format!("media {digest} has unknown kind {kind:?}"),
        })?;
        Ok(info)
    }

    /// Deletes `digest`: its blob, then its row, in one transaction that is rolled back if the
    /// blob cannot be removed, so a successful delete never leaves the content behind.
    pub fn delete(&mut self, digest: &str) -> Result<(), MediaError> {
        const OP: &str = "delete";
        check_digest(digest)?;
        let path = &self.db_path;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .ctx(OP, path)?;
        let removed = tx
            .execute("DELETE FROM media WHERE digest = ?1", [digest])
            .ctx(OP, path)?;
        if removed == 0 {
            return Err(MediaError::NotFound {
                digest: digest.to_owned(),
            });
        }
        // A crash after the unlink and before the commit leaves the row with no blob: `get`
        // says Missing, and deleting again completes (a missing blob is not an error here).
        self.blobs.remove(digest)?;
        tx.commit().ctx(OP, path)
    }

    /// How many items the store holds.
    pub fn len(&self) -> Result<usize, MediaError> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM media", [], |r| r.get(0))
            .ctx("count", &self.db_path)?;
        Ok(n as usize)
    }

    /// Whether the store holds no item.
    pub fn is_empty(&self) -> Result<bool, MediaError> {
        Ok(self.len()? == 0)
    }

    /// Copies the WAL into the database file (for a clean shutdown or a backup).
    pub fn checkpoint(&mut self) -> Result<(), MediaError> {
        self.conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .ctx("checkpoint", &self.db_path)
    }
}
