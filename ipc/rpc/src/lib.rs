//! Hearth's plugin **control plane**: JSON-RPC 2.0 over newline-delimited frames on a child's
//! stdin/stdout.
//!
//! This crate owns the wire: frames and their limit ([`FrameReader`], [`FrameWriter`]), the
//! messages ([`Message`]), the error codes ([`ErrorKind`], [`HandlerError`]), a blocking peer
//! ([`connect`] → [`Peer`]) that correlates calls by id, serves incoming requests with panic
//! isolation under an in-flight bound and honours `$/cancel`, the [`handshake`] with protocol
//! version negotiation, the call context's wire form ([`WireContext`]) and the capability gate
//! ([`gate`]) the kernel applies to a plugin's reverse calls. It knows nothing of processes,
//! stages or memory: the kernel's plugin host and the plugin SDK (`hearth-plugin`) sit on top,
//! and a plugin in another language needs only `ipc/PROTOCOL.md`.
//!
//! ```
//! use std::time::Duration;
//! use hearth_rpc::{connect, ConnectionConfig, HandlerError, Incoming, Service};
//! use serde_json::{json, Value};
//!
//! struct Echo;
//! impl Service for Echo {
//!     fn call(&self, req: Incoming) -> Result<Value, HandlerError> {
//!         match req.method.as_str() {
//!             "echo" => Ok(req.params),
//!             other => Err(HandlerError::method_not_found(other)),
//!         }
//!     }
//! }
//!
//! // Two peers joined by a pair of pipes; in Hearth the other end is a plugin process.
//! let (a_read, b_write) = std::io::pipe()?;
//! let (b_read, a_write) = std::io::pipe()?;
//! let a = connect(a_read, a_write, Echo, ConnectionConfig::default());
//! let _b = connect(b_read, b_write, Echo, ConnectionConfig::default());
//! let got = a.call("echo", json!({"hi": 1}), Duration::from_secs(5))?;
//! assert_eq!(got, json!({"hi": 1}));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod call_context;
mod cancel;
pub mod capability;
mod connection;
mod error;
mod error_code;
mod frame;
mod handshake;
mod id;
mod message;
pub mod methods;
mod params;
#[cfg(feature = "ipc")]
mod shared_ipc;
mod stats;

pub use call_context::{Priority, Trust, WireContext};
pub use cancel::CancelToken;
pub use capability::{Grants, clamp_inject_params, clamp_priority, gate};
pub use connection::{
    ConnectionConfig, DEFAULT_READ_SPIN, Incoming, Peer, PendingCall, Service, connect,
    default_read_spin, panic_message,
};
pub use error::{FrameError, RpcError};
pub use error_code::{ErrorKind, ErrorObject, HandlerError};
pub use frame::{DEFAULT_MAX_FRAME, FrameReader, FrameWriter};
pub use handshake::{
    HANDSHAKE_TIMEOUT, HandshakeParams, HandshakeResult, PROTOCOL_VERSION, STOP_TIMEOUT,
    SUPPORTED_VERSIONS, accept, choose_version, handshake,
};
pub use id::Id;
pub use message::{Message, Notification, Request, Response};
pub use params::{
    ArenaAlloc, ArenaBlock, InitParams, InputRegister, InvokeResult, LogParams, OutputInvoke,
    OutputRegister, SharedFrame, SharedRef, StageInvoke, StageRegister, StageResult, ToolInvoke,
    ToolRegister,
};
pub use stats::Stats;
