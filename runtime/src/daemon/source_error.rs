//! Why an LLM source could not be added, removed, tested or started.

use std::path::PathBuf;

/// Why a source request failed; the text is what `hearth source …` prints.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// The source's settings are not valid (name, URL, limits: the message says which).
    #[error("{0}")]
    Invalid(String),
    /// The source's own settings are not valid (the error names the source and the field).
    #[error(transparent)]
    Config(#[from] hearth_llm::provider::SourceConfigError),
    /// Its adapter could not be found, read or loaded.
    #[error("adapter {adapter}: {message}")]
    Adapter {
        /// The adapter's name or file.
        adapter: String,
        /// Why.
        message: String,
    },
    /// No source has this name.
    #[error("no source named {0}")]
    Unknown(String),
    /// The source is not removed this way; the message says where it is changed instead.
    #[error("{0}")]
    NotRemovable(String),
    /// The test prompt failed.
    #[error("source {name} failed: {message}")]
    Failed {
        /// The source tried.
        name: String,
        /// The provider's error.
        message: String,
    },
    /// `sources.json` could not be written.
    #[error("saving {}: {source}", path.display())]
    Save {
        /// The file.
        path: PathBuf,
        /// The write's error.
        #[source]
        source: std::io::Error,
    },
    /// The embedded model server could not start (its assets, or the process).
    #[error("{0}")]
    Embedded(String),
}
