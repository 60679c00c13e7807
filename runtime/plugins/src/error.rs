//! The crate-boundary error.

use std::path::PathBuf;

/// Everything that can go wrong loading, starting or managing a plugin.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PluginError {
    /// A `plugin.json` is unreadable or invalid.
    #[error("{}: {problem}; fix: {fix}", path.display())]
    Manifest {
        /// The manifest file (or the entry it names).
        path: PathBuf,
        /// What is wrong.
        problem: String,
        /// What to do about it.
        fix: String,
    },
    /// The declared needs cannot be met: a facility nobody provides, or a cycle.
    #[error("start order: {0}")]
    Order(String),
    /// No installed plugin has that name.
    #[error("no plugin named {name:?} is installed (see `hearth plugin list`)")]
    NotInstalled {
        /// The name asked for.
        name: String,
    },
    /// A plugin of that name is installed already.
    #[error("a plugin named {name:?} is installed already at {}; remove it first (`hearth plugin remove {name}`)", dir.display())]
    AlreadyInstalled {
        /// The name.
        name: String,
        /// Where it lives.
        dir: PathBuf,
    },
    /// The process could not be spawned.
    #[error("plugin {name}: could not start {}: {source}", entry.display())]
    Spawn {
        /// The plugin.
        name: String,
        /// The program.
        entry: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The process started but the handshake, `plugin.init` or `plugin.start` failed.
    #[error("plugin {name}: {reason}")]
    Start {
        /// The plugin.
        name: String,
        /// Why, in words a user can act on.
        reason: String,
    },
    /// The shared segment or a doorbell could not be set up.
    #[error("data plane: {0}")]
    DataPlane(#[source] hearth_ipc::IpcError),
    /// A file under the plugins directory could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl PluginError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> PluginError {
        let path = path.into();
        move |source| PluginError::Io { path, source }
    }
}
