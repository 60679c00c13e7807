//! The bottom of the connector chain: a TCP connection tied to the cancel token of the call it
//! is working for. Cancelling shuts the socket down (both directions), which wakes a read or
//! write blocked on it in another thread at once and tells the server the request is gone. TLS
//! is layered on top by `ureq`'s rustls connector, so a handshake stuck on a silent peer is
//! interrupted the same way. Connections outlive their call in the agent's pool; one taken from
//! the pool binds itself to the next call (see [`call_scope`](super::call_scope)).

use super::call_scope::{self, CallBinding};
use super::deadline::ReadDeadline;
use super::error::{ConnectFailure, TlsFailure, cancelled_ureq};
use super::off_thread::{OffThread, run_cancellable};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, LazyBuffers, NextTimeout, RustlsConnector,
    ShutdownHandle, Transport,
};

/// Opens a socket for the calling thread's current call.
#[derive(Debug, Default)]
pub(super) struct CancelConnector;

/// A connection asked for outside `HttpClient::send` has no call to bind to: a bug, reported
/// as an error rather than a panic.
pub(super) fn no_call() -> ureq::Error {
    ureq::Error::Other(Box::new(ConnectFailure(
        "connection requested outside a call".to_owned(),
    )))
}

impl Connector<()> for CancelConnector {
    type Out = CancelTcpTransport;

    fn connect(
        &self,
        details: &ConnectionDetails,
        _chained: Option<()>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        let call = call_scope::current().ok_or_else(no_call)?;
        let budget = details.timeout;
        if budget.after.is_zero() {
            return Err(ureq::Error::Timeout(budget.reason));
        }
        let limit = budget.not_zero().map(|d| *d);
        let addrs: Vec<SocketAddr> = details.addrs.iter().copied().collect();
        let connected = match connect_loopback_inline(&addrs, limit) {
            Some(done) => OffThread::Done(done),
            None => {
                let job = move || connect_any(&addrs, limit);
                run_cancellable(&call.cancel, "hearth-http-connect", job)?
            }
        };
        let stream = match connected {
            OffThread::Done(Ok(stream)) => stream,
            OffThread::Done(Err(e)) if e.kind() == io::ErrorKind::TimedOut => {
                return Err(ureq::Error::Timeout(budget.reason));
            }
            OffThread::Done(Err(e)) => {
                return Err(ureq::Error::Other(Box::new(ConnectFailure(e.to_string()))));
            }
            OffThread::Cancelled => return Err(cancelled_ureq()),
        };
        // Small request writes and token-sized reads: latency matters more than packet count.
        stream.set_nodelay(true)?;

        let socket = Arc::new(BoundSocket {
            stream,
            call: AtomicU64::new(0),
        });
        (details.register_shutdown)(Arc::downgrade(&socket) as Weak<dyn ShutdownHandle>)?;

        let buffers = LazyBuffers::new(
            details.config.input_buffer_size(),
            details.config.output_buffer_size(),
        );
        let mut transport = CancelTcpTransport {
            socket,
            buffers,
            read_timeout: None,
            write_timeout: None,
            deadline: None,
            bound: 0,
        };
        // Runs the hook at once if the token fired while we were connecting.
        transport.bind(&call);
        Ok(Some(transport))
    }
}

/// A connection's socket and the call that may shut it down.
#[derive(Debug)]
struct BoundSocket {
    stream: TcpStream,
    /// The id of the call the connection works for; a cancel of any other call leaves it alone.
    call: AtomicU64,
}

impl ShutdownHandle for BoundSocket {
    fn shutdown(&self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// Tries each resolved address in turn within one shared deadline; the last error wins.
/// How long a connect to a loopback address may hold the calling thread. A local server
/// accepts (or refuses) within microseconds unless its listen queue is full; only then does the
/// connect move to a helper thread the cancel token can abandon.
const LOOPBACK_INLINE: Duration = Duration::from_millis(20);

/// Connects on the calling thread when every address is a loopback one (a local model server,
/// the usual home setup), saving a thread per call: `None` when an address is not loopback or a
/// connect did not finish within [`LOOPBACK_INLINE`], and the helper thread should try.
fn connect_loopback_inline(
    addrs: &[SocketAddr],
    limit: Option<Duration>,
) -> Option<io::Result<TcpStream>> {
    if addrs.is_empty() || !addrs.iter().all(|a| a.ip().is_loopback()) {
        return None;
    }
    let wait = limit.map_or(LOOPBACK_INLINE, |l| l.min(LOOPBACK_INLINE));
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect_timeout(addr, wait) {
            Ok(stream) => return Some(Ok(stream)),
            Err(e) if e.kind() == io::ErrorKind::TimedOut => return None,
            Err(e) => last = Some(io::Error::new(e.kind(), format!("{addr}: {e}"))),
        }
    }
    last.map(Err)
}

fn connect_any(addrs: &[SocketAddr], limit: Option<Duration>) -> io::Result<TcpStream> {
    let deadline = limit.map(|l| Instant::now() + l);
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address to connect to");
    for addr in addrs {
        let attempt = match deadline {
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                TcpStream::connect_timeout(addr, left)
            }
            None => TcpStream::connect(addr),
        };
        match attempt {
            Ok(stream) => return Ok(stream),
            Err(e) => last = io::Error::new(e.kind(), format!("{addr}: {e}")),
        }
    }
    Err(last)
}

/// Plain TCP under `ureq`'s HTTP/1.1 machinery (and under rustls for `https`).
pub(super) struct CancelTcpTransport {
    socket: Arc<BoundSocket>,
    buffers: LazyBuffers,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    /// The bound call's stream limits.
    deadline: Option<Arc<ReadDeadline>>,
    /// The bound call's id; 0 before the first.
    bound: u64,
}

impl std::fmt::Debug for CancelTcpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelTcpTransport")
            .field("peer", &self.socket.stream.peer_addr().ok())
            .field("call", &self.bound)
            .finish()
    }
}

impl CancelTcpTransport {
    /// Makes the connection work for `call`: its deadline bounds the reads and its token shuts
    /// the socket down. The hook left on an earlier call's token checks the socket's call id
    /// first, so a late stop of a finished call cannot break the call now using the connection;
    /// nor can one of a call that ended while the connection sat idle in the pool.
    fn bind(&mut self, call: &Arc<CallBinding>) {
        if self.bound == call.id() {
            return;
        }
        if self.bound != 0 {
            call.mark_reused();
        }
        self.bound = call.id();
        self.deadline = call.deadline.clone();
        // SYNC: pairs with the Acquire load in the hook, which may run on the cancelling thread.
        self.socket.call.store(call.id(), Ordering::Release);
        // Only weak handles go into the token: the socket still closes when the pool drops it,
        // and a late cancel cannot touch a descriptor number that has since been reused.
        let (socket, owner, id) = (
            Arc::downgrade(&self.socket),
            Arc::downgrade(call),
            call.id(),
        );
        call.cancel.on_cancel(move || {
            let Some(socket) = socket.upgrade() else {
                return;
            };
            if owner.strong_count() > 0 && socket.call.load(Ordering::Acquire) == id {
                socket.shutdown();
            }
        });
    }

    /// Binds to the thread's current call, if it runs one (body reads on another thread keep
    /// the binding they have).
    fn bind_current(&mut self) {
        if let Some(call) = call_scope::current() {
            self.bind(&call);
        }
    }
}

/// Applies `timeout` to the socket only when it changed, to save a syscall per read.
fn sync_timeout(
    wanted: Option<Duration>,
    current: &mut Option<Duration>,
    set: impl FnOnce(Option<Duration>) -> io::Result<()>,
) -> io::Result<()> {
    if wanted != *current {
        set(wanted)?;
        *current = wanted;
    }
    Ok(())
}

/// How much later than wanted an armed read timeout may fire: a streamed call moves its
/// deadline with every event, and re-arming the socket for each would cost a syscall per token.
const LATE_SLACK: Duration = Duration::from_millis(20);
/// How much earlier than wanted it may fire; an early wake-up only costs one more read.
const EARLY_SLACK: Duration = Duration::from_secs(1);

/// Arms the socket's read timeout for `wanted`, keeping the one already set when it fires
/// within the slack of it (late by at most [`LATE_SLACK`]).
fn arm_read_timeout(
    wanted: Option<Duration>,
    current: &mut Option<Duration>,
    set: impl FnOnce(Option<Duration>) -> io::Result<()>,
) -> io::Result<()> {
    let close_enough = match (wanted, *current) {
        (None, None) => true,
        (Some(w), Some(c)) => c <= w + LATE_SLACK && c + EARLY_SLACK >= w,
        _ => false,
    };
    if close_enough {
        return Ok(());
    }
    // A zero timeout means "block forever" to the socket; the caller never asks for one.
    let wanted = wanted.map(|w| w.max(Duration::from_millis(1)));
    set(wanted)?;
    *current = wanted;
    Ok(())
}

fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

impl Transport for CancelTcpTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.bind_current();
        let timeout = timeout.for_write();
        if timeout.after.is_zero() {
            return Err(ureq::Error::Timeout(timeout.reason));
        }
        let stream = &self.socket.stream;
        sync_timeout(
            timeout.not_zero().map(|d| *d),
            &mut self.write_timeout,
            |t| stream.set_write_timeout(t),
        )?;
        let output = &self.buffers.output()[..amount];
        match (&self.socket.stream).write_all(output) {
            Ok(()) => Ok(()),
            Err(e) if timed_out(&e) => Err(ureq::Error::Timeout(timeout.reason)),
            Err(e) => Err(e.into()),
        }
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.bind_current();
        let timeout = timeout.for_read();
        if timeout.after.is_zero() {
            return Err(ureq::Error::Timeout(timeout.reason));
        }
        let limit = timeout.not_zero().map(|d| *d);
        let started = Instant::now();
        let amount = loop {
            // Both deadlines are checked afresh on every pass: a read that timed out, or was
            // interrupted by a signal, is retried with what is left of the tighter one.
            let ours = match &self.deadline {
                Some(deadline) => Some(
                    deadline
                        .remaining()
                        .map_err(|e| ureq::Error::Other(Box::new(e)))?,
                ),
                None => None,
            };
            let theirs = match limit {
                Some(limit) => {
                    let left = limit.saturating_sub(started.elapsed());
                    if left.is_zero() {
                        return Err(ureq::Error::Timeout(timeout.reason));
                    }
                    Some(left)
                }
                None => None,
            };
            let wanted = match (ours, theirs) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let stream = &self.socket.stream;
            arm_read_timeout(wanted, &mut self.read_timeout, |t| {
                stream.set_read_timeout(t)
            })?;
            // Acknowledge at once. A server that leaves Nagle's algorithm on holds its next
            // small write until this one is acknowledged, and Linux delays acknowledgements up
            // to 40 ms once a kept connection settles into request and answer; the kernel
            // clears the flag on its own, hence before every read.
            let _ = socket2::SockRef::from(stream).set_tcp_quickack(true);
            match (&self.socket.stream).read(self.buffers.input_append_buf()) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted || timed_out(&e) => {}
                Err(e) => return Err(e.into()),
            }
        };
        self.buffers.input_appended(amount);
        Ok(amount > 0)
    }

    fn is_open(&mut self) -> bool {
        // Asked before a pooled connection is reused: open means no EOF (the server did not
        // close it while idle, and no stop shut it down) and no stray bytes.
        let stream = &self.socket.stream;
        if stream.set_nonblocking(true).is_err() {
            return false;
        }
        let mut probe = [0u8; 1];
        let open =
            matches!(stream.peek(&mut probe), Err(e) if e.kind() == io::ErrorKind::WouldBlock);
        open && stream.set_nonblocking(false).is_ok()
    }
}

/// The rustls connector, built once per client so the TLS configuration (root store, cipher
/// suites) is not rebuilt per connection.
#[derive(Debug, Clone, Default)]
pub(super) struct SharedTls(Arc<RustlsConnector>);

impl<In: Transport> Connector<In> for SharedTls {
    type Out = <RustlsConnector as Connector<In>>::Out;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        self.0.connect(details, chained).map_err(|e| match e {
            // Deadlines and our own markers keep their meaning; the rest is the handshake's.
            ureq::Error::Timeout(_) | ureq::Error::Other(_) => e,
            other => ureq::Error::Other(Box::new(TlsFailure(other.to_string()))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, TcpListener};

    #[test]
    fn a_loopback_connect_runs_inline_and_anything_else_goes_to_the_helper() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind");
        let open = listener.local_addr().expect("addr");
        let stream = connect_loopback_inline(&[open], None).expect("inline");
        assert_eq!(stream.expect("connected").peer_addr().expect("peer"), open);

        // A refused connect is its error at once, named by the address.
        let closed = {
            let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind");
            l.local_addr().expect("addr")
        };
        let refused = connect_loopback_inline(&[closed], None).expect("inline");
        let err = refused.expect_err("nobody listens");
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
        assert!(err.to_string().contains(&closed.to_string()), "{err}");

        let remote: SocketAddr = "192.0.2.1:80".parse().expect("addr");
        assert!(connect_loopback_inline(&[remote], None).is_none());
        assert!(connect_loopback_inline(&[open, remote], None).is_none());
        assert!(connect_loopback_inline(&[], None).is_none());
    }
}
