//! The registry: definitions in memory, user values in `<data_dir>/settings.db`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use parking_lot::{Mutex, RwLock};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;

use crate::{Access, Key, SettingDef, SettingsError};

/// The file under the data dir.
pub const SETTINGS_FILE: &str = "settings.db";

/// Where the value in effect comes from, lowest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Origin {
    /// Nothing set it: the definition's default (or `null` without one).
    Default,
    /// The configuration file (`hearth.toml`).
    File,
    /// A user (or a plugin) set it; kept in `settings.db`.
    User,
}

/// One key as `list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// The full key.
    pub key: String,
    /// The value in effect: the one set, else the file's, else the default.
    pub value: Value,
    /// Whether a user value is stored (`origin` is then [`Origin::User`]).
    pub is_set: bool,
    /// Which layer `value` comes from.
    pub origin: Origin,
    /// The file's value when a user value shadows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_value: Option<Value>,
    /// The definition, if one was registered.
    pub def: Option<SettingDef>,
}

/// What a listing shows in place of a secret's value.
pub const HIDDEN: &str = "(secret; read it by its key)";

impl Setting {
    /// The setting as a listing shows it: a secret's value (and the file's) replaced by
    /// [`HIDDEN`] when there is one.
    pub fn listed(mut self) -> Setting {
        if self.def.as_ref().is_some_and(|d| d.secret) {
            let hide = |v: &mut Value| {
                if !(v.is_null() || v.as_str() == Some("")) {
                    *v = Value::String(HIDDEN.to_owned());
                }
            };
            hide(&mut self.value);
            if let Some(file) = self.file_value.as_mut() {
                hide(file);
            }
        }
        self
    }
}

/// A value to set: JSON as it is, or text read by the definition's type.
#[derive(Debug, Clone, Copy)]
pub enum SetValue<'a> {
    /// Already typed (`null` resets).
    Json(&'a Value),
    /// As typed on a command line.
    Text(&'a str),
}

/// Every setting of the daemon and its plugins.
pub struct Settings {
    path: PathBuf,
    db: Mutex<Connection>,
    defs: RwLock<BTreeMap<Key, SettingDef>>,
    file: RwLock<BTreeMap<Key, Value>>,
}

impl Settings {
    /// Opens (creating) `<data_dir>/settings.db` and takes it for this process alone: while
    /// it is open, another process opening it gets [`SettingsError::Busy`].
    pub fn open(data_dir: &Path) -> Result<Settings, SettingsError> {
        std::fs::create_dir_all(data_dir).map_err(|source| SettingsError::Io {
            path: data_dir.to_owned(),
            source,
        })?;
        let path = data_dir.join(SETTINGS_FILE);
        let sql = |source| SettingsError::Sqlite {
            path: path.clone(),
            source,
        };
        let db = Connection::open(&path).map_err(sql)?;
        // Another owner is refused at once rather than after SQLite's default 5 s of retries.
        db.busy_timeout(std::time::Duration::ZERO).map_err(sql)?;
        // One owner: the exclusive lock is taken by the first write below and kept until the
        // connection closes, so a second daemon (or a stray tool) cannot interleave writes.
        db.pragma_update(None, "locking_mode", "EXCLUSIVE")
            .map_err(sql)?;
        let created = db.execute_batch(
            "BEGIN EXCLUSIVE;
             CREATE TABLE IF NOT EXISTS settings (
                 key TEXT PRIMARY KEY NOT NULL,
                 value TEXT NOT NULL,
                 updated_ms INTEGER NOT NULL
             );
             COMMIT;",
        );
        match created {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) =>
            {
                return Err(SettingsError::Busy { path });
            }
            other => other.map_err(sql)?,
        }
        Ok(Settings {
            path,
            db: Mutex::new(db),
            defs: RwLock::new(BTreeMap::new()),
            file: RwLock::new(BTreeMap::new()),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql(&self) -> impl FnOnce(rusqlite::Error) -> SettingsError + '_ {
        |source| SettingsError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// Registers (or replaces) a definition. Its default must have its type (or be `null`:
    /// none). A value already set for the key stays: a new default never overwrites what the
    /// user chose.
    pub fn define(&self, def: SettingDef) -> Result<(), SettingsError> {
        let key = Key::parse(&def.key)?;
        if !def.default.is_null() {
            def.kind.check(&key, &def.default)?;
        }
        self.defs.write().insert(key, def);
        Ok(())
    }

    /// [`define`](Self::define) on behalf of `who` (a plugin defines only its own keys).
    pub fn define_as(&self, who: &Access, mut def: SettingDef) -> Result<(), SettingsError> {
        def.key = who.resolve(&def.key)?.to_string();
        self.define(def)
    }

    /// Gives `key` the configuration file's `value`: above the default, below a user value.
    /// Checked against the definition when there is one (a value of the wrong type is refused
    /// here rather than read as the default later).
    pub fn set_file_value(&self, key: &str, value: Value) -> Result<(), SettingsError> {
        let key = Key::parse(key)?;
        if let Some(def) = self.defs.read().get(&key) {
            def.kind.check(&key, &value)?;
        }
        self.file.write().insert(key, value);
        Ok(())
    }

    /// The definition of `key`, if one is registered.
    pub fn def(&self, key: &str) -> Option<SettingDef> {
        self.defs.read().get(&Key::parse(key).ok()?).cloned()
    }

    /// The definition of `key`, or [`SettingsError::Unknown`].
    pub fn defined(&self, key: &Key) -> Result<SettingDef, SettingsError> {
        self.defs
            .read()
            .get(key)
            .cloned()
            .ok_or_else(|| SettingsError::Unknown {
                key: key.to_string(),
                hint: "`hearth settings list` shows the defined keys; a plugin's appear once it is installed",
            })
    }

    /// The definitions under `prefix` (full keys; `""` for all).
    pub fn defs(&self, prefix: &str) -> Vec<SettingDef> {
        self.defs
            .read()
            .iter()
            .filter(|(k, _)| k.as_str().starts_with(prefix))
            .map(|(_, d)| d.clone())
            .collect()
    }

    fn stored(&self, key: &Key) -> Result<Option<Value>, SettingsError> {
        let text: Option<String> = self
            .db
            .lock()
            .query_row(
                "SELECT value FROM settings WHERE key = ?1",
                params![key.as_str()],
                |row| row.get(0),
            )
            .optional()
            .map_err(self.sql())?;
        // The file is ours alone and every value went in through `set`, so it parses; a value
        // that does not (edited by hand) reads as unset rather than failing every read.
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    fn effective(&self, key: &Key) -> Result<Setting, SettingsError> {
        let def = self.defs.read().get(key).cloned();
        // A value set under an older definition of another type gives way to the layer below.
        let fits = |v: &Value| def.as_ref().is_none_or(|d| d.kind.admits(v));
        let stored = self.stored(key)?.filter(fits);
        let file = self.file.read().get(key).cloned().filter(fits);
        let (origin, value) = match (&stored, &file) {
            (Some(v), _) => (Origin::User, v.clone()),
            (None, Some(v)) => (Origin::File, v.clone()),
            (None, None) => (
                Origin::Default,
                def.as_ref().map_or(Value::Null, |d| d.default.clone()),
            ),
        };
        Ok(Setting {
            key: key.to_string(),
            is_set: stored.is_some(),
            origin,
            file_value: file.filter(|_| stored.is_some()),
            value,
            def,
        })
    }

    /// One key as `list` shows it, for `who`.
    pub fn setting_as(&self, who: &Access, key: &str) -> Result<Setting, SettingsError> {
        self.effective(&who.resolve(key)?)
    }

    /// The value of `key` for `who`: the one set, else the default, else `null`.
    pub fn get_as(&self, who: &Access, key: &str) -> Result<Value, SettingsError> {
        let key = who.resolve(key)?;
        Ok(self.effective(&key)?.value)
    }

    /// Sets `key` for `who`; checked against its definition's type first (a refused value
    /// leaves the old one). `null` resets the key to its default.
    pub fn set_as(&self, who: &Access, key: &str, value: Value) -> Result<(), SettingsError> {
        let key = who.resolve(key)?;
        if value.is_null() {
            return self.reset(&key).map(drop);
        }
        if let Some(def) = self.defs.read().get(&key) {
            def.kind.check(&key, &value)?;
        }
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        self.db
            .lock()
            .execute(
                "INSERT INTO settings (key, value, updated_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_ms = excluded.updated_ms",
                params![key.as_str(), value.to_string(), now_ms],
            )
            .map_err(self.sql())?;
        Ok(())
    }

    /// [`set_as`](Self::set_as) for a key that must be defined (the CLI and the web page set
    /// only what something reads); `text`, when given, is read by the definition's type
    /// ([`SettingKind::parse_text`](crate::SettingKind::parse_text)). Returns the value stored.
    pub fn set_defined_as(
        &self,
        who: &Access,
        key: &str,
        value: SetValue<'_>,
    ) -> Result<(Value, SettingDef), SettingsError> {
        let full = who.resolve(key)?;
        let def = self.defined(&full)?;
        let value = match value {
            SetValue::Json(v) => v.clone(),
            SetValue::Text(t) => def.kind.parse_text(&full, t)?,
        };
        self.set_as(who, full.as_str(), value.clone())?;
        Ok((value, def))
    }

    fn reset(&self, key: &Key) -> Result<bool, SettingsError> {
        let n = self
            .db
            .lock()
            .execute("DELETE FROM settings WHERE key = ?1", params![key.as_str()])
            .map_err(self.sql())?;
        Ok(n > 0)
    }

    /// Forgets the value set for `key` (it reads as its default again); whether there was one.
    pub fn reset_as(&self, who: &Access, key: &str) -> Result<bool, SettingsError> {
        let key = who.resolve(key)?;
        self.reset(&key)
    }

    /// Every key `who` may see under `prefix` (relative for a plugin, like `get_as`): defined
    /// ones and set ones, in key order.
    pub fn list_as(&self, who: &Access, prefix: &str) -> Result<Vec<Setting>, SettingsError> {
        let full = who.resolve_prefix(prefix)?;
        let mut keys: Vec<Key> = self
            .defs
            .read()
            .keys()
            .chain(self.file.read().keys())
            .filter(|k| k.as_str().starts_with(&full))
            .cloned()
            .collect();
        {
            let db = self.db.lock();
            let mut stmt = db
                .prepare("SELECT key FROM settings WHERE key >= ?1 ORDER BY key")
                .map_err(self.sql())?;
            let rows = stmt
                .query_map(params![full], |row| row.get::<_, String>(0))
                .map_err(self.sql())?;
            for key in rows {
                let key = key.map_err(self.sql())?;
                if !key.starts_with(&full) {
                    break;
                }
                if let Ok(k) = Key::parse(&key) {
                    keys.push(k);
                }
            }
        }
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .filter(|k| who.resolve(k.as_str()).is_ok())
            .map(|k| self.effective(&k).map(Setting::listed))
            .collect()
    }

    /// The kernel's [`get_as`](Self::get_as).
    pub fn get(&self, key: &str) -> Result<Value, SettingsError> {
        self.get_as(&Access::kernel(), key)
    }

    /// The kernel's [`set_as`](Self::set_as).
    pub fn set(&self, key: &str, value: Value) -> Result<(), SettingsError> {
        self.set_as(&Access::kernel(), key, value)
    }
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("path", &self.path)
            .field("defs", &self.defs.read().len())
            .finish()
    }
}
