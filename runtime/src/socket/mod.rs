//! The daemon's client socket and its line-delimited JSON protocol (documented in
//! ARCHITECTURE.md and [`protocol`]).

mod bind;
mod client;
mod connection;
mod control;
mod direct;
mod dispatch;
mod outbox;
pub mod protocol;
mod reactor;
mod reap;
mod ring_feed;
mod server;
mod state;
mod worker;
mod write_some;

pub use client::{Client, ClientError};
pub use control::{Control, ControlError};
pub use dispatch::control_answer;
pub use protocol::{Answer, Request, RequestError};
pub use server::SocketServer;
