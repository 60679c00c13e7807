//! Bounded edges between nodes: a crossbeam bounded channel plus the wake-ups the engine needs.
//!
//! The receiving end binds itself to the worker that first reads it (nodes never migrate, so that is
//! the worker owning the consuming node); from then on every successful send wakes that worker if it
//! is parked. A sender on a worker that finds the edge full registers its own worker, and the next
//! successful receive wakes it, so a back-pressured node is not left parked once room appears.
//! Dropping an endpoint wakes the other side so it can observe the disconnection.
//!
//! A node that has never read an edge is not woken by it; it does not need to be: its first read
//! (in any poll) binds the edge and sees everything sent before (Dekker pair on the binding, below).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crossbeam_channel as channel;
use parking_lot::Mutex;

use super::waker::{WorkerSignal, current_worker};

/// Creates a bounded edge holding at most `capacity` values.
///
/// # Panics
///
/// If `capacity` is 0: a rendezvous edge cannot be fed by a node that must never block.
pub fn edge<T: Send>(capacity: usize) -> (EdgeTx<T>, EdgeRx<T>) {
    assert!(capacity > 0, "an edge needs a capacity of at least 1");
    let (tx, rx) = channel::bounded(capacity);
    let shared = Arc::new(EdgeShared::default());
    (
        EdgeTx {
            chan: tx,
            notice: TxDropNotice(Arc::clone(&shared)),
        },
        EdgeRx {
            chan: rx,
            notice: RxDropNotice(shared),
        },
    )
}

#[derive(Default)]
struct EdgeShared {
    /// The worker owning the consuming node, learnt on its first read.
    consumer: OnceLock<Arc<WorkerSignal>>,
    /// Fast check for `blocked`, read after every successful receive.
    senders_blocked: AtomicBool,
    /// Workers whose nodes found the edge full since the last receive.
    blocked: Mutex<Vec<Arc<WorkerSignal>>>,
}

impl EdgeShared {
    /// Called after a value was enqueued (or a sender dropped).
    #[inline]
    fn notify_consumer(&self) {
        // SYNC: pairs with the fence in `WorkerSignal::prepare_park` (the consumer parks only after a
        // final pass that would see this value) and with the fence in `bind_consumer` (a consumer
        // binding concurrently either sees this value or is seen here).
        fence(Ordering::SeqCst);
        if let Some(consumer) = self.consumer.get() {
            consumer.wake_if_sleeping();
        }
    }

    #[inline]
    fn bind_consumer(&self) {
        if self.consumer.get().is_none() {
            self.bind_consumer_slow();
        }
    }

    #[cold]
    fn bind_consumer_slow(&self) {
        if let Some(me) = current_worker() {
            // A second binder can only be the same node moved elsewhere; the first binding stays.
            let _ = self.consumer.set(me);
            // SYNC: pairs with the fence in `notify_consumer`: the read that follows sees a value
            // whose sender did not yet see this binding.
            fence(Ordering::SeqCst);
        }
    }

    #[cold]
    fn register_blocked_sender(&self, sender: Arc<WorkerSignal>) {
        {
            let mut blocked = self.blocked.lock();
            if !blocked.iter().any(|known| Arc::ptr_eq(known, &sender)) {
                blocked.push(sender);
            }
            self.senders_blocked.store(true, Ordering::Relaxed);
        }
        // SYNC: pairs with the fence in `release_blocked_senders`: either the sender's retry sees the
        // room a receive made, or that receive sees `senders_blocked`.
        fence(Ordering::SeqCst);
    }

    /// Called after a value was dequeued (or the receiver dropped).
    #[inline]
    fn release_blocked_senders(&self) {
        // SYNC: pairs with the fence in `register_blocked_sender`.
        fence(Ordering::SeqCst);
        if self.senders_blocked.load(Ordering::Relaxed) {
            self.wake_blocked_senders();
        }
    }

    #[cold]
    fn wake_blocked_senders(&self) {
        let woken = {
            let mut blocked = self.blocked.lock();
            self.senders_blocked.store(false, Ordering::Relaxed);
            std::mem::take(&mut *blocked)
        };
        for sender in woken {
            sender.wake_if_sleeping();
        }
    }
}

/// The sending end of an edge. Clone it for several producers; use it from any thread.
pub struct EdgeTx<T> {
    // Field order matters: the channel end must be dropped before the notice wakes the consumer,
    // so the consumer can observe the disconnection.
    chan: channel::Sender<T>,
    notice: TxDropNotice,
}

struct TxDropNotice(Arc<EdgeShared>);

impl Drop for TxDropNotice {
    fn drop(&mut self) {
        self.0.notify_consumer();
    }
}

impl<T> EdgeTx<T> {
    /// Enqueues `value` without blocking, or hands it back when the edge is full or the receiver is
    /// gone. Wakes the consuming worker if it is parked. On a worker thread, a `Full` also arranges
    /// for this worker to be woken by the next receive, so the sending node will be polled again
    /// once there is room.
    #[inline]
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        match self.chan.try_send(value) {
            Ok(()) => {
                self.notice.0.notify_consumer();
                Ok(())
            }
            Err(channel::TrySendError::Full(value)) => self.retry_when_full(value),
            Err(channel::TrySendError::Disconnected(value)) => {
                Err(TrySendError::Disconnected(value))
            }
        }
    }

    #[cold]
    fn retry_when_full(&self, value: T) -> Result<(), TrySendError<T>> {
        let Some(me) = current_worker() else {
            return Err(TrySendError::Full(value));
        };
        self.notice.0.register_blocked_sender(me);
        // Room may have appeared between the first attempt and the registration; the receive that
        // made it may not have seen the registration.
        match self.chan.try_send(value) {
            Ok(()) => {
                self.notice.0.notify_consumer();
                Ok(())
            }
            Err(channel::TrySendError::Full(value)) => Err(TrySendError::Full(value)),
            Err(channel::TrySendError::Disconnected(value)) => {
                Err(TrySendError::Disconnected(value))
            }
        }
    }

    /// Blocks the calling thread up to `timeout` for room. For threads that are not workers (service
    /// threads, the daemon's socket threads); a node must use [`EdgeTx::try_send`].
    pub fn send_timeout(&self, value: T, timeout: Duration) -> Result<(), SendTimeoutError<T>> {
        match self.chan.send_timeout(value, timeout) {
            Ok(()) => {
                self.notice.0.notify_consumer();
                Ok(())
            }
            Err(channel::SendTimeoutError::Timeout(value)) => Err(SendTimeoutError::Timeout(value)),
            Err(channel::SendTimeoutError::Disconnected(value)) => {
                Err(SendTimeoutError::Disconnected(value))
            }
        }
    }

    /// Values currently queued.
    pub fn len(&self) -> usize {
        self.chan.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.chan.is_empty()
    }

    /// Whether a `try_send` would currently fail with `Full`.
    pub fn is_full(&self) -> bool {
        self.chan.is_full()
    }

    /// The bound given to [`edge`].
    pub fn capacity(&self) -> usize {
        self.chan.capacity().unwrap_or(usize::MAX)
    }
}

impl<T> Clone for EdgeTx<T> {
    fn clone(&self) -> Self {
        Self {
            chan: self.chan.clone(),
            notice: TxDropNotice(Arc::clone(&self.notice.0)),
        }
    }
}

impl<T> fmt::Debug for EdgeTx<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EdgeTx")
            .field("len", &self.chan.len())
            .field("capacity", &self.capacity())
            .finish()
    }
}

/// The receiving end of an edge, owned by exactly one node (or one non-worker thread).
pub struct EdgeRx<T> {
    // Dropped before the notice, so woken senders observe the disconnection.
    chan: channel::Receiver<T>,
    notice: RxDropNotice,
}

struct RxDropNotice(Arc<EdgeShared>);

impl Drop for RxDropNotice {
    fn drop(&mut self) {
        self.0.release_blocked_senders();
    }
}

impl<T> EdgeRx<T> {
    /// Dequeues the oldest value without blocking. Wakes a worker whose node found the edge full.
    #[inline]
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.notice.0.bind_consumer();
        match self.chan.try_recv() {
            Ok(value) => {
                self.notice.0.release_blocked_senders();
                Ok(value)
            }
            Err(channel::TryRecvError::Empty) => Err(TryRecvError::Empty),
            Err(channel::TryRecvError::Disconnected) => Err(TryRecvError::Disconnected),
        }
    }

    /// Blocks the calling thread up to `timeout` for a value. For threads that are not workers
    /// (collectors, tests); a node must use [`EdgeRx::try_recv`].
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        match self.chan.recv_timeout(timeout) {
            Ok(value) => {
                self.notice.0.release_blocked_senders();
                Ok(value)
            }
            Err(channel::RecvTimeoutError::Timeout) => Err(RecvTimeoutError::Timeout),
            Err(channel::RecvTimeoutError::Disconnected) => Err(RecvTimeoutError::Disconnected),
        }
    }

    /// Values currently queued. Like every read, binds the edge to the calling worker.
    pub fn len(&self) -> usize {
        self.notice.0.bind_consumer();
        self.chan.len()
    }

    /// Whether nothing is queued. Like every read, binds the edge to the calling worker.
    pub fn is_empty(&self) -> bool {
        self.notice.0.bind_consumer();
        self.chan.is_empty()
    }

    /// The bound given to [`edge`].
    pub fn capacity(&self) -> usize {
        self.chan.capacity().unwrap_or(usize::MAX)
    }

    /// Index of the worker this edge wakes on a send, once a worker has read it.
    pub fn bound_worker(&self) -> Option<usize> {
        self.notice.0.consumer.get().map(|signal| signal.worker())
    }
}

impl<T> fmt::Debug for EdgeRx<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EdgeRx")
            .field("len", &self.chan.len())
            .field("capacity", &self.capacity())
            .field("bound_worker", &self.bound_worker())
            .finish()
    }
}

/// Why [`EdgeTx::try_send`] failed; carries the value back.
#[derive(Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TrySendError<T> {
    /// The edge holds `capacity` values.
    #[error("edge is full")]
    Full(T),
    /// The receiving end was dropped.
    #[error("edge receiver is gone")]
    Disconnected(T),
}

impl<T> TrySendError<T> {
    /// The value that was not sent.
    pub fn into_inner(self) -> T {
        match self {
            Self::Full(value) | Self::Disconnected(value) => value,
        }
    }

    /// Whether the edge was full (the value can be retried later).
    pub fn is_full(&self) -> bool {
        matches!(self, Self::Full(_))
    }

    /// Whether the receiver is gone (the value can never be delivered).
    pub fn is_disconnected(&self) -> bool {
        matches!(self, Self::Disconnected(_))
    }
}

impl<T> fmt::Debug for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full(_) => f.write_str("Full(..)"),
            Self::Disconnected(_) => f.write_str("Disconnected(..)"),
        }
    }
}

/// Why [`EdgeTx::send_timeout`] failed; carries the value back.
#[derive(Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendTimeoutError<T> {
    /// The edge stayed full for the whole timeout.
    #[error("edge stayed full until the timeout")]
    Timeout(T),
    /// The receiving end was dropped.
    #[error("edge receiver is gone")]
    Disconnected(T),
}

impl<T> SendTimeoutError<T> {
    /// The value that was not sent.
    pub fn into_inner(self) -> T {
        match self {
            Self::Timeout(value) | Self::Disconnected(value) => value,
        }
    }
}

impl<T> fmt::Debug for SendTimeoutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout(_) => f.write_str("Timeout(..)"),
            Self::Disconnected(_) => f.write_str("Disconnected(..)"),
        }
    }
}

/// Why [`EdgeRx::try_recv`] returned nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TryRecvError {
    /// Nothing queued right now.
    #[error("edge is empty")]
    Empty,
    /// Nothing queued and every sender was dropped.
    #[error("edge is empty and every sender is gone")]
    Disconnected,
}

/// Why [`EdgeRx::recv_timeout`] returned nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecvTimeoutError {
    /// Nothing arrived before the timeout.
    #[error("nothing arrived before the timeout")]
    Timeout,
    /// Nothing queued and every sender was dropped.
    #[error("edge is empty and every sender is gone")]
    Disconnected,
}
