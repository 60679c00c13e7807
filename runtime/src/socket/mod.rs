//! The daemon's client socket and its line-delimited JSON protocol (documented in
//! ARCHITECTURE.md and [`protocol`]).

mod client;
pub mod protocol;
mod server;

pub use client::{Client, ClientError};
pub use protocol::{Answer, Request};
pub use server::{Control, SocketServer};
