//! Hearth's settings registry: every tunable of the kernel and of each plugin, by key.
//!
//! - **Keys** live in two namespaces: `core.<name>` for the kernel and
//!   `plugin.<plugin>.<name>` for each plugin ([`Key`]). A plugin reaches only its own
//!   namespace unless it is granted more ([`Access`]).
//! - **Definitions** ([`SettingDef`]) give a key a type, a description and a default; the
//!   kernel and plugins register them at start. Registering again (a new version with a new
//!   default) never touches the value a user set.
//! - **Precedence**, lowest first: a definition's default, then the configuration file's
//!   value (`hearth.toml`, handed over with [`Settings::set_file_value`]), then the value a
//!   user set, kept here. Each [`Setting`] says which one it shows ([`Origin`]).
//! - **Values** the user (or a plugin) set live in their own SQLite file,
//!   `<data_dir>/settings.db`, opened by one owner: the daemon holds it exclusively, so a
//!   second process is refused instead of racing it. A value is checked against its
//!   definition's type before it is stored; a bad one is refused and the old value kept.
//!
//! ```
//! use hearth_settings::{Access, SettingDef, SettingKind, Settings};
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir()?;
//! let settings = Settings::open(dir.path())?;
//! settings.define(SettingDef::new("plugin.timer.max", SettingKind::Integer, json!(20), "Timers at once"))?;
//! let timer = Access::plugin("timer");
//! assert_eq!(settings.get_as(&timer, "max")?, json!(20));
//! settings.set_as(&timer, "max", json!(50))?;
//! assert_eq!(settings.get_as(&timer, "max")?, json!(50));
//! assert!(settings.set_as(&timer, "max", json!("many")).is_err());
//! assert!(settings.get_as(&timer, "core.socket").is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod access;
mod def;
mod error;
mod key;
mod store;

pub use access::Access;
pub use def::{Applies, SettingDef, SettingKind};
pub use error::SettingsError;
pub use key::Key;
pub use store::{HIDDEN, Origin, SETTINGS_FILE, SetValue, Setting, Settings};
