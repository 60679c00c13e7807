//! A streaming client's deltas written on the provider's thread, as each is published: the
//! token reaches the client without waking the socket's thread first, which halves the thread
//! wake-ups between the model's socket and the client's.
//!
//! The reactor stays the one owner of every connection; it lends a connection's socket (a
//! duplicate of its descriptor) to the publisher only while nothing else can be written to it:
//!
//! - **Start**: when a connection's answer has begun to stream (the reactor wrote its first
//!   delta, so requests waiting in the kernel's queue hold no second descriptor), its
//!   `accepted` line is out, it has no output waiting, and the reactor's ring feed has read
//!   everything published (checked under the same lock the publisher holds while it
//!   publishes), so every later delta of the request is the publisher's to write and none
//!   before it is.
//! - **While lent**: the publisher writes each delta of the request whole, without blocking,
//!   and does not ring the reactor's doorbell for it (the reactor reads it later, with the
//!   next event it wakes for). A peer that takes only part of one (or none, or fails) ends its
//!   turn: it keeps the unwritten rest, writes nothing more, and rings the reactor.
//! - **Claim**: the reactor still reads every delta off the ring. For each it asks who wrote it;
//!   when the publisher stopped, the socket comes back to the reactor with the rest, which is
//!   queued before anything else. A delta before the last one the publisher wrote needs no
//!   lock to answer: the publisher marks how far it wrote ([`WrittenMark`]) after each write,
//!   and a later delta written means this one was written whole (it stops at its first short
//!   write and writes nothing after). Being woken only by other events, the reactor reads lent
//!   deltas in batches, so it takes the lock about once per batch, for the newest.
//! - **End**: before the reactor writes any other line to the connection (its terminal line,
//!   a lag notice) or closes it, it takes the socket back the same way.
//!
//! Bytes therefore reach a client in ring order from one writer at a time.

use super::protocol::DeltaLine;
use super::write_some::write_some;
use hearth_ipc::{Doorbell, EventKind};
use hearth_kernel::events::{Delta, DeltaTap};
use parking_lot::{Mutex, MutexGuard};
use std::collections::HashMap;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The requests whose deltas the publisher writes, by request id.
#[derive(Debug)]
pub(super) struct DirectStreams {
    lent: Mutex<HashMap<String, Lent>>,
    /// How many requests `lent` holds, stored under its lock whenever it changes. Only the
    /// reactor adds or removes entries (the publisher changes them in place), so on the
    /// reactor's thread this count is exact: with none, a delta's writer is known without the
    /// lock, and a client the reactor writes to costs no lock per delta.
    entries: AtomicUsize,
    /// The reactor's doorbell and its id in the publisher's list: spared while the publisher
    /// writes, rung when it stops.
    reactor_bell: (u64, Doorbell),
    /// Deltas the publisher took on (wrote whole, or began and handed the rest back), and
    /// deltas the reactor handed to a connection: each delta of a followed answer is counted
    /// once, by its writer, and `hearth status` shows them, so who writes is observable.
    by_publisher: AtomicU64,
    by_reactor: AtomicU64,
}

/// How far the publisher wrote a lent request's deltas, readable without the table's lock:
/// one more than the ring sequence of the last delta it wrote or began (0: none yet). Stored
/// after each write, so it only grows while the socket is lent.
#[derive(Clone, Debug, Default)]
pub(super) struct WrittenMark(Arc<AtomicU64>);

impl WrittenMark {
    /// Whether the publisher wrote a delta after `seq` of this request: then `seq` was written
    /// whole, and the answer under the lock would be "written, nothing comes back".
    pub(super) fn passed(&self, seq: u64) -> bool {
        // SYNC: pairs with the Release store in `DirectStreams::around`, made after the write
        // of the delta it counts.
        self.0.load(Ordering::Acquire) > seq.saturating_add(1)
    }

    fn set(&self, seq: u64) {
        self.0.store(seq.saturating_add(1), Ordering::Release);
    }
}

/// One connection's socket, lent to the publisher for one request, and what it wrote.
#[derive(Debug)]
struct Lent {
    /// A duplicate of the connection's descriptor (non-blocking, as the original); `None` once
    /// the reactor took the socket back while deltas the publisher wrote are still unread.
    stream: Option<UnixStream>,
    /// The last ring sequence the publisher wrote, whole or in part.
    through: Option<u64>,
    /// `through`, for the reactor's claims without the lock.
    mark: WrittenMark,
    /// The publisher stopped: the part of its last delta the peer did not take.
    rest: Option<Vec<u8>>,
    /// The line being written; reused from delta to delta.
    line: Vec<u8>,
}

impl Lent {
    /// Whether the publisher writes this request's next delta.
    fn writing(&self) -> bool {
        self.stream.is_some() && self.rest.is_none()
    }

    /// The bytes to queue before anything else when the socket comes back; `None` when it
    /// came back earlier.
    fn into_rest(self) -> Option<Vec<u8>> {
        self.stream.map(|_| self.rest.unwrap_or_default())
    }
}

/// Who writes a delta the reactor read off the ring.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Claim {
    /// The publisher wrote it (or its first part): the reactor does not.
    pub(super) written: bool,
    /// The socket came back: queue these bytes before anything else.
    pub(super) rest: Option<Vec<u8>>,
}

impl DirectStreams {
    /// No socket lent yet; `reactor_bell` is the reactor's doorbell and its id.
    pub(super) fn new(reactor_bell: (u64, Doorbell)) -> Self {
        Self {
            lent: Mutex::default(),
            entries: AtomicUsize::new(0),
            reactor_bell,
            by_publisher: AtomicU64::new(0),
            by_reactor: AtomicU64::new(0),
        }
    }

    /// Counts a delta the reactor handed to its connection.
    pub(super) fn reactor_wrote(&self) {
        self.by_reactor.fetch_add(1, Ordering::Relaxed);
    }

    /// How many deltas each writer has written since start: `{publisher, reactor}`.
    pub(super) fn counts(&self) -> serde_json::Value {
        serde_json::json!({
            "publisher": self.by_publisher.load(Ordering::Relaxed),
            "reactor": self.by_reactor.load(Ordering::Relaxed),
        })
    }

    /// Whether the publisher writes the deltas of `request_id` (lent, and not stopped).
    pub(super) fn is_writing(&self, request_id: &str) -> bool {
        self.table()
            .is_some_and(|lent| lent.get(request_id).is_some_and(Lent::writing))
    }

    /// Lends `socket` to the publisher for the deltas of `request_id` published from now on,
    /// when the ring feed has read everything published (`position == published()`, checked
    /// while no delta can be published): how far the publisher writes, for claims without the
    /// lock. `None` when it has not: the reactor goes on writing.
    pub(super) fn lend(
        &self,
        request_id: &str,
        socket: &impl AsFd,
        position: u64,
        published: impl Fn() -> u64,
    ) -> Option<WrittenMark> {
        let mut lent = self.lent.lock();
        if lent.contains_key(request_id) || published() != position {
            return None;
        }
        let fd = socket.as_fd().try_clone_to_owned().ok()?;
        let mark = WrittenMark::default();
        lent.insert(
            request_id.to_owned(),
            Lent {
                stream: Some(UnixStream::from(fd)),
                through: None,
                mark: mark.clone(),
                rest: None,
                line: Vec::new(),
            },
        );
        self.count(&lent);
        Some(mark)
    }

    /// Whether any request is in the table (exact on the reactor's thread, see `entries`).
    fn any_lent(&self) -> bool {
        self.entries.load(Ordering::Relaxed) > 0
    }

    /// The table, locked, for the reactor's reads and removals; `None` without the lock when
    /// it holds no request.
    fn table(&self) -> Option<MutexGuard<'_, HashMap<String, Lent>>> {
        self.any_lent().then(|| self.lent.lock())
    }

    /// Stores the table's size; called under its lock after every insert or removal.
    fn count(&self, lent: &HashMap<String, Lent>) {
        self.entries.store(lent.len(), Ordering::Relaxed);
    }

    /// Who writes the delta `seq` of `request_id` (see [`Claim`]). The reactor claims a
    /// request's deltas in ring order, possibly long after the publisher wrote them (it is not
    /// woken for them): a delta up to the last one the publisher wrote is the publisher's, and
    /// the socket comes back (with the rest of a half-written line) when the reactor reaches
    /// that last one, or passes it.
    pub(super) fn claim(&self, request_id: &str, seq: u64) -> Claim {
        let theirs_alone = Claim {
            written: false,
            rest: None,
        };
        let Some(mut lent) = self.table() else {
            return theirs_alone;
        };
        let Some(entry) = lent.get(request_id) else {
            return theirs_alone;
        };
        let written = entry.through.is_some_and(|t| seq <= t);
        let last = entry.through.is_none_or(|t| seq >= t);
        if !last || (written && entry.writing()) {
            return Claim {
                written,
                rest: None,
            };
        }
        // Nothing after this delta is the publisher's (or, defensively, it never saw this one).
        let entry = lent.remove(request_id).expect("looked up above");
        self.count(&lent);
        Claim {
            written,
            rest: entry.into_rest(),
        }
    }

    /// Takes the socket of `request_id` back, if it is lent: the bytes to queue first. What the
    /// publisher wrote stays known until the reactor has read it (see [`DirectStreams::claim`]).
    pub(super) fn end(&self, request_id: &str) -> Option<Vec<u8>> {
        let mut lent = self.table()?;
        let entry = lent.get_mut(request_id)?;
        let rest = entry
            .stream
            .take()
            .map(|_| entry.rest.take().unwrap_or_default());
        if entry.through.is_none() {
            lent.remove(request_id);
            self.count(&lent);
        }
        rest
    }

    /// [`DirectStreams::end`], and forgets the request: for a request whose deltas have all
    /// been read, or whose connection is gone.
    pub(super) fn forget(&self, request_id: &str) -> Option<Vec<u8>> {
        let mut lent = self.table()?;
        let entry = lent.remove(request_id)?;
        self.count(&lent);
        entry.into_rest()
    }
}

impl DeltaTap for DirectStreams {
    fn around(
        &self,
        kind: EventKind,
        delta: &Delta<'_>,
        publish: &mut dyn FnMut(Option<u64>) -> Option<u64>,
    ) {
        // Held across the publication: the reactor never sees a delta before its write is done.
        let mut lent = self.lent.lock();
        let writing = lent.get(delta.request_id).is_some_and(Lent::writing);
        let Some(seq) = publish(writing.then_some(self.reactor_bell.0)) else {
            return;
        };
        let Some(entry) = lent.get_mut(delta.request_id).filter(|_| writing) else {
            return;
        };
        let Some(stream) = entry.stream.as_mut() else {
            return;
        };
        entry.line.clear();
        DeltaLine {
            content: delta.content,
            reasoning: kind == EventKind::ReasoningDelta,
            reset: delta.reset,
        }
        .write_to(&mut entry.line);
        let written = write_some(stream, &entry.line);
        // Its delta from here on, even unwritten (the reactor then sends the rest it hands back).
        if written.is_ok() {
            self.by_publisher.fetch_add(1, Ordering::Relaxed);
        }
        match written {
            Ok(sent) if sent == entry.line.len() => {
                entry.through = Some(seq);
                entry.mark.set(seq);
            }
            Ok(sent) => {
                entry.through = Some(seq);
                entry.mark.set(seq);
                entry.rest = Some(entry.line[sent..].to_vec());
                self.reactor_bell.1.ring();
            }
            // Not written: the reactor writes it, meets the error and closes the connection.
            Err(_) => {
                entry.rest = Some(Vec::new());
                self.reactor_bell.1.ring();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn publish(streams: &DirectStreams, request_id: &str, content: &str, seq: u64) {
        let delta = Delta {
            content,
            channel: "cli",
            request_id,
            reset: false,
        };
        streams.around(EventKind::ContentDelta, &delta, &mut |_| Some(seq));
    }

    /// A connected pair, both ends non-blocking as the reactor's sockets are.
    fn pair() -> (UnixStream, UnixStream) {
        let (ours, peer) = UnixStream::pair().expect("pair");
        ours.set_nonblocking(true).expect("non-blocking");
        peer.set_nonblocking(true).expect("non-blocking");
        (ours, peer)
    }

    fn streams() -> DirectStreams {
        DirectStreams::new((7, Doorbell::new().expect("eventfd")))
    }

    fn line(content: &str) -> Vec<u8> {
        let mut buf = Vec::new();
        DeltaLine {
            content,
            reasoning: false,
            reset: false,
        }
        .write_to(&mut buf);
        buf
    }

    fn read_all(peer: &mut UnixStream) -> Vec<u8> {
        let mut got = Vec::new();
        let mut chunk = [0u8; 64 * 1024];
        loop {
            match peer.read(&mut chunk) {
                Ok(0) => return got,
                Ok(n) => got.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return got,
                Err(e) => panic!("read: {e}"),
            }
        }
    }

    /// A socket is lent only when the feed has read everything published, and only once; the
    /// publisher then writes the lent request's deltas and no other's, and the reactor is told
    /// it need not.
    #[test]
    fn a_lent_socket_gets_its_requests_deltas_from_the_publisher() {
        let (ours, mut peer) = pair();
        let streams = streams();
        assert!(
            streams.lend("r", &ours, 4, || 5).is_none(),
            "one delta not read yet"
        );
        assert!(streams.lend("r", &ours, 5, || 5).is_some());
        assert!(streams.lend("r", &ours, 5, || 5).is_none(), "lent already");

        publish(&streams, "r", "hello", 5);
        publish(&streams, "other", "not yours", 6);
        assert_eq!(read_all(&mut peer), line("hello"));
        let mine = Claim {
            written: true,
            rest: None,
        };
        assert_eq!(streams.claim("r", 5), mine);
        let not_lent = Claim {
            written: false,
            rest: None,
        };
        assert_eq!(streams.claim("other", 6), not_lent);
        assert_eq!(streams.end("r"), Some(Vec::new()));
        publish(&streams, "r", "after", 7);
        assert!(
            read_all(&mut peer).is_empty(),
            "taken back: nothing written"
        );
        assert_eq!(streams.claim("r", 7), not_lent);
    }

    /// A peer that stops reading ends the publisher's turn mid-line: the part it took and the
    /// rest handed back make the whole line, and nothing after it is written by the publisher.
    #[test]
    fn a_full_peer_ends_the_publishers_turn_and_the_rest_comes_back() {
        let (ours, mut peer) = pair();
        let streams = streams();
        assert!(streams.lend("r", &ours, 0, || 0).is_some());
        let big = "y".repeat(48 * 1024);
        let mut seq = 0;
        let rest = loop {
            publish(&streams, "r", &big, seq);
            let claim = streams.claim("r", seq);
            assert!(claim.written, "the publisher began delta {seq}");
            if let Some(rest) = claim.rest {
                break rest;
            }
            seq += 1;
            assert!(seq < 10_000, "a socket buffer is not that large");
        };
        assert!(!rest.is_empty(), "the peer stopped mid-line");
        publish(&streams, "r", "later", seq + 1);
        let not_lent = Claim {
            written: false,
            rest: None,
        };
        assert_eq!(streams.claim("r", seq + 1), not_lent);
        let mut got = read_all(&mut peer);
        got.extend_from_slice(&rest);
        assert_eq!(got, line(&big).repeat(seq as usize + 1));
    }

    /// The reactor reads deltas long after the publisher wrote them: every one up to the last
    /// the publisher wrote stays the publisher's, even after the socket was taken back, so
    /// none goes out twice; the rest of a half-written line comes back exactly once.
    #[test]
    fn a_reactor_that_reads_late_writes_nothing_twice() {
        let (ours, mut peer) = pair();
        let streams = streams();
        let mark = streams.lend("r", &ours, 10, || 10).expect("lent");
        for seq in 10..15 {
            publish(&streams, "r", "word", seq);
        }
        assert_eq!(read_all(&mut peer), line("word").repeat(5));
        // Taken back (a lag notice) before the reactor read any of them.
        assert_eq!(streams.end("r"), Some(Vec::new()));
        assert!(!streams.is_writing("r"));
        publish(&streams, "r", "mine", 15);
        assert!(read_all(&mut peer).is_empty());
        let written = Claim {
            written: true,
            rest: None,
        };
        for seq in 10..15 {
            // The mark answers for every delta but the last without the lock, as the lock would.
            assert_eq!(mark.passed(seq), seq < 14, "delta {seq}");
            assert_eq!(streams.claim("r", seq), written, "delta {seq}");
        }
        let not_lent = Claim {
            written: false,
            rest: None,
        };
        assert_eq!(streams.claim("r", 15), not_lent);
        let mark = streams
            .lend("r", &ours, 16, || 16)
            .expect("lent again once read");

        // A full peer: the publisher stops mid-line; the reactor, reading late, skips what was
        // written and gets the rest at the half-written delta.
        let big = "z".repeat(48 * 1024);
        let mut seq = 16;
        while streams.is_writing("r") {
            publish(&streams, "r", &big, seq);
            seq += 1;
            assert!(seq < 10_000, "a socket buffer is not that large");
        }
        let stopped_at = seq - 1;
        for early in 16..stopped_at {
            assert!(mark.passed(early), "delta {early}");
            assert_eq!(streams.claim("r", early), written, "delta {early}");
        }
        assert!(
            !mark.passed(stopped_at),
            "the half-written delta asks under the lock"
        );
        let claim = streams.claim("r", stopped_at);
        assert!(claim.written);
        let rest = claim.rest.expect("the socket comes back");
        assert!(!rest.is_empty());
        assert_eq!(streams.claim("r", stopped_at + 1), not_lent);
        let mut got = read_all(&mut peer);
        got.extend_from_slice(&rest);
        assert_eq!(got, line(&big).repeat((stopped_at - 15) as usize));
    }

    /// With no socket lent, the reactor learns a delta is its own to write, and that nothing
    /// comes back, without the lock the publisher holds while it publishes.
    #[test]
    fn with_nothing_lent_the_reactor_takes_no_lock() {
        let streams = std::sync::Arc::new(streams());
        let held = streams.lent.lock();
        let (tx, rx) = std::sync::mpsc::channel();
        let reactor = std::sync::Arc::clone(&streams);
        std::thread::spawn(move || {
            let claim = reactor.claim("r", 1);
            let writing = reactor.is_writing("r");
            let back = (reactor.end("r"), reactor.forget("r"));
            let _ = tx.send((claim, writing, back));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("answered while the publisher holds the lock");
        drop(held);
        let not_lent = Claim {
            written: false,
            rest: None,
        };
        assert_eq!(got, (not_lent, false, (None, None)));

        // Once one request is lent, every other's claim asks under the lock, and the count
        // follows the table back to empty.
        let (ours, _peer) = pair();
        assert!(streams.lend("r", &ours, 0, || 0).is_some());
        assert!(streams.any_lent());
        assert_eq!(streams.forget("r"), Some(Vec::new()));
        assert!(!streams.any_lent());
    }

    /// The publisher and the reactor on their own threads, as in the daemon: the publisher
    /// writes each delta while lent and stops at a full socket; the reactor claims every delta
    /// after it is published (by the mark when it can, under the lock otherwise), writes what
    /// is its own after any rest that comes back, and lends the socket again once it has caught
    /// up. Deltas come in bursts (the reactor falls behind, as when it is woken late) with
    /// pauses (it catches up and lends), and a slow peer fills the socket. The peer must receive
    /// every line exactly once, in order, whoever wrote it.
    #[test]
    fn two_writers_deliver_every_delta_once_and_in_order() {
        use std::io::Write;
        use std::sync::mpsc;
        use std::time::{Duration, Instant};

        const DELTAS: u64 = 1_200;
        const BURST: u64 = 24;
        let content = |seq: u64| {
            let pad = "x".repeat(1_000 + (seq as usize * 37) % 3_000);
            format!("{seq:05}{pad}")
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        let (ours, mut peer) = pair();
        let streams = Arc::new(streams());
        let published = Arc::new(AtomicU64::new(0));
        // How many deltas the reactor has handled (lend attempt included).
        let handled = Arc::new(AtomicU64::new(0));
        let (seqs_tx, seqs_rx) = mpsc::channel::<u64>();

        let publisher = {
            let streams = Arc::clone(&streams);
            let (published, handled) = (Arc::clone(&published), Arc::clone(&handled));
            std::thread::spawn(move || {
                for seq in 0..DELTAS {
                    let text = content(seq);
                    let delta = Delta {
                        content: &text,
                        channel: "cli",
                        request_id: "r",
                        reset: false,
                    };
                    streams.around(EventKind::ContentDelta, &delta, &mut |_| {
                        published.store(seq + 1, Ordering::SeqCst);
                        seqs_tx.send(seq).expect("reactor alive");
                        Some(seq)
                    });
                    if seq % BURST == BURST - 1 {
                        while handled.load(Ordering::SeqCst) <= seq {
                            assert!(Instant::now() < deadline, "reactor stalled");
                            std::thread::sleep(Duration::from_micros(100));
                        }
                    }
                }
            })
        };

        let reactor = {
            let streams = Arc::clone(&streams);
            let (published, handled) = (Arc::clone(&published), Arc::clone(&handled));
            let mut ours = ours;
            std::thread::spawn(move || {
                let mut mark: Option<WrittenMark> = None;
                let (mut by_mark, mut rests) = (0u64, 0u64);
                let flush = |ours: &mut UnixStream, bytes: &[u8]| {
                    let mut sent = 0;
                    while sent < bytes.len() {
                        match ours.write(&bytes[sent..]) {
                            Ok(n) => sent += n,
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                                assert!(Instant::now() < deadline, "peer stalled");
                                std::thread::sleep(Duration::from_micros(200));
                            }
                            Err(e) => panic!("reactor write: {e}"),
                        }
                    }
                };
                for seq in 0..DELTAS {
                    assert_eq!(seqs_rx.recv().expect("publisher alive"), seq);
                    let claim = match &mark {
                        Some(m) if m.passed(seq) => {
                            by_mark += 1;
                            Claim {
                                written: true,
                                rest: None,
                            }
                        }
                        _ => streams.claim("r", seq),
                    };
                    if let Some(rest) = claim.rest {
                        mark = None;
                        rests += 1;
                        flush(&mut ours, &rest);
                    }
                    if !claim.written {
                        flush(&mut ours, &line(&content(seq)));
                    }
                    // Caught up and nothing owed: lend again, as `lend_clear` does.
                    if mark.is_none() && !streams.is_writing("r") {
                        let at = || published.load(Ordering::SeqCst);
                        mark = streams.lend("r", &ours, seq + 1, at);
                    }
                    handled.store(seq + 1, Ordering::SeqCst);
                }
                if let Some(rest) = streams.forget("r") {
                    flush(&mut ours, &rest);
                }
                (by_mark, rests)
            })
        };

        let expected: Vec<u8> = (0..DELTAS).flat_map(|seq| line(&content(seq))).collect();
        let mut got = Vec::with_capacity(expected.len());
        let mut chunk = vec![0u8; 8 * 1024];
        while got.len() < expected.len() {
            assert!(Instant::now() < deadline, "stalled at {} bytes", got.len());
            match peer.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => got.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("peer read: {e}"),
            }
            // A slow client: the socket fills and the publisher's writes come up short.
            std::thread::sleep(Duration::from_micros(500));
        }
        publisher.join().expect("publisher");
        let (by_mark, rests) = reactor.join().expect("reactor");
        assert!(
            got == expected,
            "{} bytes received, {} expected",
            got.len(),
            expected.len()
        );
        let counts = streams.counts();
        // Every path was taken: the publisher wrote, the reactor knew it by the mark, and a
        // full socket handed a half-written line back.
        assert!(
            counts["publisher"].as_u64().is_some_and(|n| n > 0),
            "{counts}"
        );
        assert!(
            by_mark > 0 && rests > 0,
            "by the mark {by_mark}, rests {rests}"
        );
    }
}
