//! The client side of the socket protocol, used by the `hearth` CLI (and usable by any tool).

use super::protocol::{Answer, Request};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// One connection to `hearthd`'s socket: writes [`Request`]s and reads their [`Answer`]s.
#[derive(Debug)]
pub struct Client {
    out: UnixStream,
    input: BufReader<UnixStream>,
}

/// Why a request could not be completed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The socket could not be connected to (no daemon, wrong path, no permission).
    #[error("cannot reach hearthd at {path}: {source} (is it running? start it with `make run`)")]
    Connect {
        /// The socket's path.
        path: String,
        /// The I/O error from connecting.
        source: std::io::Error,
    },
    /// Writing or reading failed, or the daemon closed the connection before a terminal line.
    #[error("connection to hearthd lost: {0}")]
    Io(#[from] std::io::Error),
    /// The request could not be serialised, or the daemon's line is not a known [`Answer`].
    #[error("hearthd sent an unreadable line: {0}")]
    Protocol(String),
    /// The daemon wants a key and none or a wrong one was given.
    #[error("hearthd refused the key: unauthorized")]
    Unauthorized,
}

impl Client {
    /// Connects and, when `key` is given, authenticates with it.
    pub fn connect(path: &Path, key: Option<&str>) -> Result<Self, ClientError> {
        let stream = UnixStream::connect(path).map_err(|source| ClientError::Connect {
            path: path.display().to_string(),
            source,
        })?;
        let mut client = Self {
            out: stream.try_clone()?,
            input: BufReader::new(stream),
        };
        if let Some(key) = key {
            match client.request(
                &Request::Auth {
                    key: key.to_string(),
                },
                |_| {},
            )? {
                Answer::Response { .. } => {}
                _ => return Err(ClientError::Unauthorized),
            }
        }
        Ok(client)
    }

    /// Whether the daemon has closed this connection while it sat unused (its idle timeout, a
    /// restart): then a new one is needed before the next request.
    pub fn closed_by_daemon(&mut self) -> bool {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        use std::os::fd::AsFd;
        if !self.input.buffer().is_empty() {
            return true;
        }
        // Between requests nothing is due: anything readable (the idle notice, EOF) means the
        // daemon is done with this connection.
        let mut fds = [PollFd::new(self.input.get_ref().as_fd(), PollFlags::POLLIN)];
        !matches!(poll(&mut fds, PollTimeout::ZERO), Ok(0))
    }

    /// Sends `request`, hands every delta to `on_delta`, and returns the terminal answer.
    pub fn request(
        &mut self,
        request: &Request,
        mut on_delta: impl FnMut(&Answer),
    ) -> Result<Answer, ClientError> {
        let mut line =
            serde_json::to_string(request).map_err(|e| ClientError::Protocol(e.to_string()))?;
        line.push('\n');
        if let Err(e) = self.out.write_all(line.as_bytes()) {
            // The daemon may have refused the connection (too many clients) and closed it: its
            // reason is still in our receive buffer.
            return match self.read_answer() {
                Ok(Some(answer @ Answer::Error { .. })) => Ok(answer),
                _ => Err(ClientError::Io(e)),
            };
        }
        loop {
            let Some(answer) = self.read_answer()? else {
                return Err(ClientError::Io(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "hearthd closed the connection",
                )));
            };
            if answer.is_terminal() {
                if matches!(&answer, Answer::Error { error } if error == "unauthorized") {
                    return Err(ClientError::Unauthorized);
                }
                return Ok(answer);
            }
            on_delta(&answer);
        }
    }

    /// One answer line, or None at EOF.
    fn read_answer(&mut self) -> Result<Option<Answer>, ClientError> {
        let mut reply = String::new();
        if self.input.read_line(&mut reply)? == 0 {
            return Ok(None);
        }
        serde_json::from_str(&reply)
            .map(Some)
            .map_err(|e| ClientError::Protocol(format!("{e}: {}", reply.trim())))
    }
}
