//! A stdio server's pipes: newline-delimited JSON-RPC 2.0, the same framing as Hearth's own
//! plugin control plane, so `hearth-rpc`'s frame reader and writer carry it (bounded frames,
//! bad lines skipped and counted, the stream read on).

use std::io::{BufRead, BufReader};
use std::process::{ChildStderr, ChildStdin, ChildStdout};
use std::sync::Arc;

use hearth_rpc::{FrameReader, FrameWriter, Message, Notification, Request};
use parking_lot::Mutex;

use crate::McpError;
use crate::calls::Calls;
use crate::connection::Transport;

/// Longest line read from or written to a server. Tool results with images are large.
pub const MAX_FRAME: usize = 16 << 20;

pub(crate) struct StdioTransport {
    server: String,
    writer: Arc<Mutex<Option<FrameWriter<ChildStdin>>>>,
}

impl StdioTransport {
    /// Starts reading `stdout` (and logging `stderr`) on threads of their own.
    pub(crate) fn start(
        calls: &Arc<Calls>,
        stdin: ChildStdin,
        stdout: ChildStdout,
        stderr: Option<ChildStderr>,
    ) -> Result<StdioTransport, McpError> {
        let server = calls.server.clone();
        let writer = Arc::new(Mutex::new(Some(FrameWriter::new(stdin, MAX_FRAME))));
        let reader_calls = Arc::clone(calls);
        let reader_writer = Arc::clone(&writer);
        let spawned = std::thread::Builder::new()
            .name(format!("mcp-{server}"))
            .spawn(move || read(&reader_calls, stdout, &reader_writer));
        if let Err(e) = spawned {
            return Err(McpError::Connect {
                server,
                reason: format!("no reader thread: {e}"),
            });
        }
        if let Some(stderr) = stderr {
            let name = server.clone();
            let _ = std::thread::Builder::new()
                .name(format!("mcp-{server}-err"))
                .spawn(move || {
                    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                        tracing::debug!(server = %name, "stderr: {line}");
                    }
                });
        }
        Ok(StdioTransport { server, writer })
    }

    fn write(&self, message: &Message, method: &str) -> Result<(), McpError> {
        write_to(&self.writer, message).map_err(|reason| McpError::Connect {
            server: self.server.clone(),
            reason: format!("could not send {method}: {reason}"),
        })
    }
}

fn write_to(
    writer: &Mutex<Option<FrameWriter<ChildStdin>>>,
    message: &Message,
) -> Result<(), String> {
    match writer.lock().as_mut() {
        Some(w) => w.write(message).map_err(|e| e.to_string()),
        None => Err("the connection is closed".into()),
    }
}

/// The reader thread: every frame to the calls table, the server's requests answered, the
/// calls closed at the end of the stream.
fn read(calls: &Calls, stdout: ChildStdout, writer: &Mutex<Option<FrameWriter<ChildStdin>>>) {
    let mut reader = FrameReader::new(stdout, MAX_FRAME);
    loop {
        match reader.next_frame() {
            Ok(Some(frame)) => {
                if let Some(reply) = calls.deliver(frame.and_then(Message::decode))
                    && let Err(e) = write_to(writer, &reply)
                {
                    tracing::debug!(server = %calls.server, "could not answer the server: {e}");
                }
            }
            Ok(None) => break,
            Err(e) => {
                tracing::warn!(server = %calls.server, "read failed: {e}");
                break;
            }
        }
    }
    calls.close();
}

impl Transport for StdioTransport {
    fn send_request(&self, request: Request) -> Result<(), McpError> {
        let method = request.method.clone();
        self.write(&Message::Request(request), &method)
    }

    fn send_notification(&self, note: Notification) -> Result<(), McpError> {
        let method = note.method.clone();
        self.write(&Message::Notification(note), &method)
    }

    fn close(&self) {
        // Closing stdin is the stdio way to ask a server to exit.
        self.writer.lock().take();
    }
}
