//! The socket's event loop: one thread and one `mio::Poll` serve the listener and every client
//! connection. Nothing here blocks: journaling and control requests run on worker threads,
//! replies and admissions arrive on channels with a `Waker`, deltas are read off the event ring
//! on this thread when its doorbell rings (see [`ring_feed`](super::ring_feed)). An idle client
//! costs a file descriptor and a few hundred bytes, no thread and no CPU.

use super::bind::Bound;
use super::connection::{Busy, Connection, Expiry, Line};
use super::control::Control;
use super::direct::{DirectStreams, WrittenMark};
use super::protocol::{Answer, DeltaLine, Request, RequestError};
use super::reap;
use super::ring_feed::{Forward, RingFeed};
use super::state::ServerState;
use super::worker::Worker;
use crate::config::SocketLimits;
use crossbeam_channel::{Receiver, Sender};
use hearth_kernel::input::{Reply, ReplyListener};
use mio::net::UnixListener;
use mio::{Events, Interest, Poll, Token, Waker};
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) const LISTENER: Token = Token(0);
pub(super) const WAKER: Token = Token(1);
pub(super) const RING: Token = Token(2);
pub(super) const FIRST_CONNECTION: usize = 3;

/// What other threads tell the reactor (besides replies and deltas).
#[derive(Debug)]
pub(super) enum Notice {
    /// The kernel's queue holds this request: its client may be told `accepted`.
    Admitted(String),
    /// A control request's answer for connection `token`.
    Answer { token: usize, answer: Answer },
}

/// Told by the kernel's threads when an input is admitted or answered.
pub(super) struct Wake {
    pub(super) notices: Sender<Notice>,
    pub(super) waker: Arc<Waker>,
}

impl ReplyListener for Wake {
    fn admitted(&self, request_id: &str) {
        // Called on the kernel's ingress worker: never wait for the reactor.
        if self
            .notices
            .try_send(Notice::Admitted(request_id.into()))
            .is_ok()
        {
            let _ = self.waker.wake();
        }
    }

    fn replied(&self) {
        let _ = self.waker.wake();
    }
}

/// How a request continues (see `dispatch`).
#[derive(Debug)]
pub(super) enum Started {
    /// Its whole answer, now.
    Answered(Answer),
    /// The connection waits for this.
    Busy(Busy),
}

/// Who streams a request and whether it is told `accepted`.
#[derive(Debug)]
pub(super) struct Follow {
    pub(super) token: usize,
    pub(super) ack: bool,
    /// Its `accepted` line is written (or none is owed): only then may its socket be lent,
    /// so no delta overtakes that line.
    pub(super) admitted: bool,
    /// A delta of its answer has been read: it streams now. Only then is its socket lent, so
    /// requests waiting in the kernel's queue hold no second descriptor.
    pub(super) streaming: bool,
    /// Its socket was lent and has not come back yet (how far the publisher wrote): no lend is
    /// tried (and no lock taken for it) on each wake until it does.
    pub(super) lent: Option<WrittenMark>,
}

/// Everything the reactor thread owns.
pub(super) struct Reactor {
    pub(super) poll: Poll,
    pub(super) listener: Option<UnixListener>,
    pub(super) bound: Bound,
    pub(super) key: Option<String>,
    pub(super) limits: SocketLimits,
    pub(super) control: Arc<dyn Control>,
    pub(super) state: Arc<ServerState>,
    pub(super) feed: RingFeed,
    /// Sockets lent to the provider's thread for a streaming answer's deltas.
    pub(super) direct: Arc<DirectStreams>,
    pub(super) wake: Arc<Wake>,
    pub(super) replies_tx: Sender<Reply>,
    pub(super) replies: Receiver<Reply>,
    pub(super) notices: Receiver<Notice>,
    pub(super) admit: Worker,
    pub(super) control_worker: Worker,
    pub(super) conns: HashMap<usize, Connection>,
    pub(super) follows: HashMap<String, Follow>,
    /// Terminal replies waiting for the feed to read every delta published before them.
    pub(super) held: Vec<(u64, Reply)>,
    /// Connections with new output or a finished request since the last sweep.
    pub(super) dirty: HashSet<usize>,
    pub(super) next_token: usize,
}

impl Reactor {
    pub(super) fn run(mut self) {
        let mut events = Events::with_capacity(256);
        loop {
            let now = Instant::now();
            let timeout = self
                .next_deadline()
                .map(|d| d.saturating_duration_since(now));
            // Armed, the publisher rings the ring's doorbell: either it sees the guard or
            // `ready` sees its event, so a delta never waits for the next other wake.
            let armed = self.feed.arm();
            let timeout = if armed.ready() {
                Some(Duration::ZERO)
            } else {
                timeout
            };
            let polled = self.poll.poll(&mut events, timeout);
            drop(armed);
            if let Err(e) = polled {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                tracing::error!("socket poll failed: {e}");
                break;
            }
            let now = Instant::now();
            for event in &events {
                match event.token() {
                    LISTENER => self.accept(now),
                    WAKER | RING => {}
                    Token(t) => {
                        let hung_up = event.is_write_closed() || event.is_error();
                        self.service(t, hung_up, now);
                    }
                }
            }
            self.take_notices();
            self.take_replies(now);
            self.apply_state();
            self.sweep(now);
            if self.finished(now) {
                break;
            }
        }
        self.close_listener();
        let tap: Arc<dyn hearth_kernel::events::DeltaTap> = self.direct.clone();
        self.control.kernel().delta_tap().remove(&tap);
    }

    fn accept(&mut self, now: Instant) {
        loop {
            let Some(listener) = &self.listener else {
                return;
            };
            let (mut stream, _) = match listener.accept() {
                Ok(accepted) => accepted,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // Out of descriptors, most likely: the pending client stays queued.
                    tracing::warn!("cannot accept a client: {e}");
                    return;
                }
            };
            if self.conns.len() >= self.limits.max_connections {
                // A client that hung up holds no slot, even before its hang-up event is read.
                for token in reap::gone(&self.conns) {
                    self.close(token);
                }
            }
            if self.conns.len() >= self.limits.max_connections {
                // A fresh socket's buffer is empty: this short line goes out without blocking.
                let refusal = Answer::error(format!(
                    "hearthd is serving its maximum of {} connections; try again later",
                    self.limits.max_connections
                ));
                let _ = stream.write_all(refusal.to_line().as_bytes());
                continue;
            }
            let token = self.next_token;
            self.next_token += 1;
            if let Err(e) = self.poll.registry().register(
                &mut stream,
                Token(token),
                Interest::READABLE | Interest::WRITABLE,
            ) {
                tracing::warn!("cannot watch a client: {e}");
                continue;
            }
            let conn = Connection::new(
                stream,
                self.key.is_none(),
                self.limits.write_buffer_bytes,
                now,
            );
            self.conns.insert(token, conn);
            // Lines may be waiting already; the edge for them has passed.
            self.service(token, false, now);
        }
    }

    /// Reads, runs and writes what connection `token` has ready.
    fn service(&mut self, token: usize, hung_up: bool, now: Instant) {
        if hung_up {
            self.close(token);
            return;
        }
        if let Err(e) = self.run_lines(token, now) {
            tracing::debug!("client connection ended: {e}");
            self.close(token);
        }
    }

    fn run_lines(&mut self, token: usize, now: Instant) -> io::Result<()> {
        loop {
            let Some(conn) = self.conns.get_mut(&token) else {
                return Ok(());
            };
            if conn.busy != Busy::Idle || conn.closing {
                break;
            }
            conn.fill()?;
            let Some(line) = conn.next_line(now) else {
                break;
            };
            self.line(token, line);
        }
        match self.conns.get_mut(&token) {
            Some(conn) => conn.flush(now),
            None => Ok(()),
        }
    }

    /// One request line of connection `token`.
    fn line(&mut self, token: usize, line: Line) {
        let Some(conn) = self.conns.get_mut(&token) else {
            return;
        };
        let request = match line {
            Line::TooLong => {
                conn.out.push(&Answer::error(format!(
                    "request line longer than {} bytes",
                    conn.max_line()
                )));
                conn.closing = true;
                return;
            }
            Line::NotUtf8 => Err(RequestError::NotUtf8),
            Line::Text(text) if text.trim().is_empty() => return,
            Line::Text(text) => Request::parse(&text),
        };
        if !conn.authed {
            // Before authentication every line but the right key closes the connection.
            match (&request, &self.key) {
                (Ok(Request::Auth { key: given }), Some(expected))
                    if constant_time_eq(given.as_bytes(), expected.as_bytes()) =>
                {
                    conn.authed = true;
                    conn.out.push(&Answer::authenticated());
                }
                _ => {
                    conn.out.push(&Answer::error("unauthorized"));
                    conn.closing = true;
                }
            }
            return;
        }
        let request = match request {
            Ok(request) => request,
            Err(e) => {
                conn.out.push(&Answer::error(e.to_string()));
                return;
            }
        };
        if !self.state.is_accepting() {
            conn.out.push(&Answer::error(
                "hearthd is stopping; try again after it restarts",
            ));
            return;
        }
        match self.start(token, request) {
            Started::Answered(answer) => {
                if let Some(conn) = self.conns.get_mut(&token) {
                    conn.out.push(&answer);
                }
            }
            Started::Busy(busy) => {
                if let Some(conn) = self.conns.get_mut(&token) {
                    conn.busy = busy;
                }
            }
        }
    }

    fn take_notices(&mut self) {
        while let Ok(notice) = self.notices.try_recv() {
            match notice {
                Notice::Admitted(request_id) => {
                    let Some(follow) = self.follows.get_mut(&request_id).filter(|f| f.ack) else {
                        continue;
                    };
                    follow.admitted = true;
                    if let Some(conn) = self.conns.get_mut(&follow.token) {
                        conn.out.push(&Answer::Accepted { request_id });
                        self.dirty.insert(follow.token);
                    }
                }
                Notice::Answer { token, answer } => {
                    if let Some(conn) = self.conns.get_mut(&token)
                        && conn.busy == Busy::Control
                    {
                        conn.out.push(&answer);
                        conn.busy = Busy::Idle;
                        self.dirty.insert(token);
                    }
                }
            }
        }
    }

    /// Takes new replies, forwards the deltas published so far, then writes every terminal
    /// line whose deltas have all been forwarded.
    fn take_replies(&mut self, now: Instant) {
        while let Ok(reply) = self.replies.try_recv() {
            // Every delta of this request was published before its reply was sent.
            let published = self.control.kernel().ring().published();
            self.held.push((published, reply));
        }
        let Reactor {
            feed,
            follows,
            conns,
            dirty,
            direct,
            control,
            ..
        } = self;
        let ring = control.kernel().ring();
        let mut to = Deliver {
            follows,
            conns,
            dirty,
            direct,
            published: || ring.published(),
            now,
        };
        feed.read(|forward| to.deliver(forward));
        to.lend_clear(feed.position());
        let position = self.feed.position();
        let (ready, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|(needed, _)| *needed <= position);
        self.held = waiting;
        for (_, reply) in ready {
            self.terminal(reply);
        }
    }

    fn terminal(&mut self, reply: Reply) {
        let Some((follow, rest)) = self.unfollow(&reply.request_id) else {
            return;
        };
        let Some(conn) = self.conns.get_mut(&follow.token) else {
            return;
        };
        conn.out.push_rest(rest);
        if conn.busy == Busy::Stream(reply.request_id.clone()) {
            conn.busy = Busy::Idle;
        }
        conn.out.push(&Answer::terminal(reply));
        self.dirty.insert(follow.token);
    }

    pub(super) fn follow(&mut self, request_id: &str, token: usize, ack: bool) {
        let follow = Follow {
            token,
            ack,
            admitted: !ack,
            streaming: false,
            lent: None,
        };
        if self
            .follows
            .insert(request_id.to_string(), follow)
            .is_none()
        {
            self.feed.follow(request_id);
        }
    }

    /// Stops following `request_id`: its follow, and the bytes a lent socket left to write.
    fn unfollow(&mut self, request_id: &str) -> Option<(Follow, Vec<u8>)> {
        let follow = self.follows.remove(request_id)?;
        self.feed.unfollow(request_id);
        // Every delta of the request has been read (its terminal waited for that), or its
        // connection is gone.
        let rest = self.direct.forget(request_id).unwrap_or_default();
        Some((follow, rest))
    }

    fn close(&mut self, token: usize) {
        if let Some(conn) = self.conns.remove(&token)
            && let Busy::Stream(request_id) = conn.busy
            && self.unfollow(&request_id).is_some()
        {
            // This connection was the answer's only reader: the task need not run on.
            self.control.kernel().abandon(&request_id);
        }
    }

    fn apply_state(&mut self) {
        if !self.state.is_accepting() {
            self.close_listener();
        }
    }

    fn close_listener(&mut self) {
        if let Some(mut listener) = self.listener.take() {
            let _ = self.poll.registry().deregister(&mut listener);
            drop(listener);
            self.bound.remove_file();
        }
    }

    /// Writes pending output and runs lines freed by finished requests (of the connections that
    /// changed), applies the timeouts and drops finished connections (of all: no syscall).
    fn sweep(&mut self, now: Instant) {
        for token in std::mem::take(&mut self.dirty) {
            self.service(token, false, now);
        }
        let idle = Duration::from_secs(self.limits.idle_timeout_secs);
        let write = Duration::from_secs(self.limits.write_timeout_secs);
        let draining = self.state.drain_deadline().is_some();
        let mut done = Vec::new();
        for (&token, conn) in &mut self.conns {
            match conn.expired(now, idle, write) {
                Some(Expiry::WriteStalled) => {
                    tracing::debug!("closing a client that read nothing for {write:?}");
                    done.push(token);
                    continue;
                }
                Some(Expiry::Idle) => {
                    conn.out.push(&Answer::error(format!(
                        "closing an idle connection after {} s",
                        idle.as_secs()
                    )));
                    conn.closing = true;
                    let _ = conn.flush(now);
                }
                None => {}
            }
            if conn.is_finished() || (draining && conn.is_quiet()) {
                done.push(token);
            }
        }
        for token in done {
            self.close(token);
        }
    }

    fn finished(&self, now: Instant) -> bool {
        match self.state.drain_deadline() {
            Some(deadline) => self.conns.is_empty() || now >= deadline,
            None => false,
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        let idle = Duration::from_secs(self.limits.idle_timeout_secs);
        let write = Duration::from_secs(self.limits.write_timeout_secs);
        self.conns
            .values()
            .filter_map(|c| c.deadline(idle, write))
            .chain(self.state.drain_deadline())
            .min()
    }
}

/// What delivering the feed's deltas needs of the reactor, borrowed apart from the feed.
struct Deliver<'r, P> {
    follows: &'r mut HashMap<String, Follow>,
    conns: &'r mut HashMap<usize, Connection>,
    dirty: &'r mut HashSet<usize>,
    direct: &'r DirectStreams,
    /// How far the ring has been published.
    published: P,
    now: Instant,
}

impl<P: Fn() -> u64> Deliver<'_, P> {
    /// Lends the socket of every streaming connection with nothing waiting to the publisher,
    /// when the feed stands at `position` and nothing more has been published (see
    /// [`direct`](super::direct)).
    fn lend_clear(&mut self, position: u64) {
        for (request_id, follow) in self.follows.iter_mut() {
            if let Some(conn) = self.conns.get(&follow.token)
                && follow.lent.is_none()
                && follow.admitted
                && follow.streaming
                && conn.out.is_clear()
                && !conn.closing
                && matches!(&conn.busy, Busy::Stream(id) if id == request_id)
            {
                follow.lent = self
                    .direct
                    .lend(request_id, &conn.stream, position, &self.published);
            }
        }
    }
}

impl<P: Fn() -> u64> Deliver<'_, P> {
    /// Hands one thing the feed read to the connection that follows it. A delta the publisher
    /// wrote is skipped; one the reactor writes goes out at once when nothing waits before it
    /// (see [`Outbox::send_delta`]). Only output left pending marks the connection for the
    /// sweep.
    ///
    /// [`Outbox::send_delta`]: super::outbox::Outbox::send_delta
    fn deliver(&mut self, forward: Forward<'_>) {
        match forward {
            Forward::Delta {
                seq,
                request_id,
                content,
                reasoning,
                reset,
            } => {
                // A delta of another request whose stream tag collides with a followed one's.
                let Some(follow) = self.follows.get_mut(request_id.as_ref()) else {
                    return;
                };
                follow.streaming = true;
                let Some(conn) = self.conns.get_mut(&follow.token) else {
                    return;
                };
                // Written whole by the publisher is known without its lock (see `direct`).
                let claim = self.direct.claim(follow.lent.as_ref(), &request_id, seq);
                if let Some(rest) = claim.rest {
                    follow.lent = None;
                    conn.out.push_rest(rest);
                }
                if !claim.written {
                    let line = DeltaLine {
                        content: &content,
                        reasoning,
                        reset,
                    };
                    match conn.send_delta(&line, self.now) {
                        Ok(_) => self.direct.reactor_wrote(),
                        Err(e) => {
                            // The sweep closes it, which also abandons the answer nobody
                            // reads now.
                            tracing::debug!("client connection ended: {e}");
                            conn.closing = true;
                        }
                    }
                }
                if !conn.out.is_clear() || conn.closing {
                    self.dirty.insert(follow.token);
                }
            }
            Forward::Lagged(missed) => {
                // Which requests lost deltas is unknown: every streaming client is told, but
                // one whose deltas the publisher writes (it lost none: the feed had read
                // everything when its socket was lent), and a lent socket comes back first so
                // the notice is written after its deltas.
                for (request_id, follow) in self.follows.iter_mut() {
                    if follow.lent.is_some() && self.direct.is_writing(request_id) {
                        continue;
                    }
                    if let Some(conn) = self.conns.get_mut(&follow.token) {
                        // A socket not lent has no rest to hand back: no lock for it.
                        if follow.lent.is_some()
                            && let Some(rest) = self.direct.end(request_id)
                        {
                            follow.lent = None;
                            conn.out.push_rest(rest);
                        }
                        conn.out.note_missed(missed);
                    }
                }
            }
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
