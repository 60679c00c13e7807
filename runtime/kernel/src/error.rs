//! The kernel crate's one error type: why a caller's request was not taken.

use crate::provider_service::PROVIDER_QUEUE;

/// Why the kernel did not take an input or a call. Each case has already been answered to the
/// input's reply channel where one exists; the error tells the submitting code what happened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// The input's trust does not allow what it asks (answered `denied`, never journaled).
    #[error("denied: the caller may not submit this input")]
    Denied,
    /// The store's owner has stopped, so the input could not be recorded (and was answered so).
    #[error("the input could not be recorded, so it was not accepted: the store owner has stopped")]
    StoreStopped,
    /// [`PROVIDER_QUEUE`] LLM calls are already waiting for the provider thread.
    #[error("the provider queue is full ({PROVIDER_QUEUE} calls waiting)")]
    ProviderQueueFull,
}

/// Why a graph memory request (a model's tool, `hearth memory`, a plugin) or a heartbeat
/// failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphMemoryError {
    /// There is no graph: it is off, or its file could not be opened (the reason says which).
    #[error("{0}")]
    Unavailable(String),
    /// The graph refused or failed: an id that is not one, a bad name, SQLite.
    #[error(transparent)]
    Graph(#[from] hearth_graph::GraphError),
    /// Reading cold context for a distillation failed.
    #[error(transparent)]
    Store(#[from] hearth_memory::StoreError),
    /// A statement told directly was refused whole (the reasons, joined).
    #[error("not stored: {0}")]
    Rejected(String),
    /// The memory service is not running (no store, or it has stopped).
    #[error("memory is not running: {0}")]
    Stopped(&'static str),
    /// A fact was forgotten from the graph, but the words it came from are still in the
    /// memory store's turns; they are taken out again at the next idle moment.
    #[error("forgotten, but its words are still in the memory store for now: {0}")]
    WordsKept(String),
    /// The media a fact was told with: one the store does not hold (or not uniquely), or the
    /// store failing; the fact was not stored.
    #[error(transparent)]
    Media(MemoryError),
}

impl From<GraphMemoryError> for hearth_stages::HandlerError {
    fn from(e: GraphMemoryError) -> Self {
        use hearth_graph::GraphError as G;
        match e {
            GraphMemoryError::Media(e) => e.into(),
            GraphMemoryError::Unavailable(_) | GraphMemoryError::Stopped(_) => {
                Self::Unavailable(e.to_string())
            }
            // What the caller asked for is wrong, not the graph: it can ask again differently.
            GraphMemoryError::Rejected(_)
            | GraphMemoryError::Graph(
                G::InvalidName { .. }
                | G::InvalidPredicate { .. }
                | G::InvalidId { .. }
                | G::NotFound { .. }
                | G::UnknownEntity { .. }
                | G::Rejected { .. }
                | G::NoCriteria
                | G::MatchesNothing { .. },
            ) => Self::InvalidArguments(e.to_string()),
            other => Self::Failed(other.to_string()),
        }
    }
}

/// Why a memory service request failed: recall for a tool, a note to store, a search.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// The memory service is not running (no store, or it has stopped).
    #[error("memory is not running: {0}")]
    Stopped(&'static str),
    /// The request is not one the service can take (a note with no content).
    #[error("{0}")]
    InvalidArguments(&'static str),
    /// Cold context failed: the store, SQLite, the embedding model.
    #[error(transparent)]
    Recall(#[from] hearth_memory::RecallError),
    /// The store failed outside a recall (reading the window).
    #[error(transparent)]
    Store(#[from] hearth_memory::StoreError),
    /// The write was made but the commit holding it failed, so nothing was stored.
    #[error("not stored: {0}")]
    NotStored(String),
    /// A request named media while the media store holds nothing yet.
    #[error("no media {0}: nothing has been stored yet")]
    NoMediaStored(String),
    /// The media store: an item named that it does not hold (or not uniquely), a name that is
    /// no digest, or the store or a blob failing.
    #[error(transparent)]
    Media(#[from] hearth_media::MediaError),
    /// A forget named a remembered turn (`c45`, `w12`) that is not there (any more).
    #[error("no remembered turn {0}")]
    NoSuchTurn(crate::entry_ref::EntryRef),
}

impl From<MemoryError> for hearth_stages::HandlerError {
    fn from(e: MemoryError) -> Self {
        match e {
            MemoryError::Stopped(_) => Self::Unavailable(e.to_string()),
            MemoryError::InvalidArguments(why) => Self::InvalidArguments(why.to_owned()),
            MemoryError::NoMediaStored(_)
            | MemoryError::NoSuchTurn(_)
            | MemoryError::Media(
                hearth_media::MediaError::NotFound { .. }
                | hearth_media::MediaError::Ambiguous { .. }
                | hearth_media::MediaError::InvalidDigest { .. },
            ) => Self::InvalidArguments(e.to_string()),
            other => Self::Failed(other.to_string()),
        }
    }
}
