//! Reading what a process under test sends to a Unix datagram socket (a service manager's
//! notification socket, for one).

use std::os::unix::net::UnixDatagram;
use std::time::Duration;

/// The next datagram on `socket` as text, or `None` when none came within `limit`.
pub fn recv_text(socket: &UnixDatagram, limit: Duration) -> Option<String> {
    socket
        .set_read_timeout(Some(limit.max(Duration::from_millis(1))))
        .ok()?;
    let mut buf = [0u8; 4096];
    let n = socket.recv(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}
