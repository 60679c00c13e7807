//! The systemd service protocol (`Type=notify`), spoken with std alone: datagrams on the socket
//! `NOTIFY_SOCKET` names (a path, or `@name` in the abstract namespace). `READY=1` once the
//! client socket accepts, `WATCHDOG=1` only while the kernel itself answers (a wedged kernel
//! stops the pings and systemd restarts the service), `STOPPING=1` at shutdown, and `STATUS=`
//! lines for `systemctl status`. Without `NOTIFY_SOCKET` (not under systemd) nothing is sent.

use crossbeam_channel::{Receiver, Sender, bounded};
use std::io;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The service manager's notification socket.
#[derive(Debug)]
pub struct Notifier {
    socket: UnixDatagram,
    addr: SocketAddr,
}

impl Notifier {
    /// The socket `NOTIFY_SOCKET` names, read through `get`; `None` when it is unset or empty.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Option<io::Result<Notifier>> {
        let value = get("NOTIFY_SOCKET").filter(|v| !v.is_empty())?;
        Some(Notifier::connect(&value))
    }

    /// `value` as systemd writes it: an absolute path, or `@name` for an abstract socket.
    pub fn connect(value: &str) -> io::Result<Notifier> {
        let addr = if let Some(name) = value.strip_prefix('@') {
            use std::os::linux::net::SocketAddrExt;
            SocketAddr::from_abstract_name(name.as_bytes())?
        } else if value.starts_with('/') {
            SocketAddr::from_pathname(value)?
        } else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("NOTIFY_SOCKET={value:?} is neither an absolute path nor @abstract"),
            ));
        };
        Ok(Notifier {
            socket: UnixDatagram::unbound()?,
            addr,
        })
    }

    /// Sends one notification (`KEY=VALUE` lines).
    pub fn notify(&self, state: &str) -> io::Result<()> {
        self.socket
            .send_to_addr(state.as_bytes(), &self.addr)
            .map(drop)
    }
}

/// A `STATUS=` line: one line, whatever `text` holds.
pub fn status(text: &str) -> String {
    format!("STATUS={}", text.replace('\n', " "))
}

/// The watchdog period systemd asks for (`WATCHDOG_USEC`), unless `WATCHDOG_PID` names
/// another process (then the request is not ours).
pub fn watchdog_period(get: impl Fn(&str) -> Option<String>) -> Option<Duration> {
    let usec: u64 = get("WATCHDOG_USEC")?.parse().ok().filter(|&u| u > 0)?;
    if let Some(pid) = get("WATCHDOG_PID").filter(|p| !p.is_empty())
        && pid.parse::<u32>().ok() != Some(std::process::id())
    {
        return None;
    }
    Some(Duration::from_micros(usec))
}

/// Pings systemd while `probe` says the kernel answers. Runs on its own thread until
/// [`stop`](Self::stop).
#[derive(Debug)]
pub struct Watchdog {
    stop: Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Probes three times per `period` (systemd's timeout), each probe given a third of it:
    /// a kernel that misses one probe still has two chances before systemd gives up on it.
    /// `probe` waits at most the time it is given and returns the status line of a live
    /// kernel, `None` when the kernel did not answer.
    pub fn start(
        notifier: std::sync::Arc<Notifier>,
        period: Duration,
        probe: impl Fn(Duration) -> Option<String> + Send + 'static,
    ) -> io::Result<Watchdog> {
        let (stop, stopped) = bounded(1);
        let thread = std::thread::Builder::new()
            .name("hearth-watchdog".into())
            .spawn(move || ping(&notifier, period / 3, &probe, &stopped))?;
        Ok(Watchdog {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the pings (before `STOPPING=1`, so a slow shutdown is judged by `TimeoutStopSec`).
    pub fn stop(mut self) {
        let _ = self.stop.send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn ping(
    notifier: &Notifier,
    every: Duration,
    probe: &dyn Fn(Duration) -> Option<String>,
    stopped: &Receiver<()>,
) {
    let mut last_answer = Instant::now();
    loop {
        let started = Instant::now();
        let message = match probe(every) {
            Some(line) => {
                last_answer = Instant::now();
                format!("WATCHDOG=1\n{}", status(&line))
            }
            None => status(&format!(
                "the kernel has not answered for {} s; watchdog pings held back",
                last_answer.elapsed().as_secs()
            )),
        };
        if let Err(e) = notifier.notify(&message) {
            tracing::warn!("systemd notification failed: {e}");
        }
        let rest = every.saturating_sub(started.elapsed());
        // A stop, or the Watchdog dropped without one.
        if !matches!(
            stopped.recv_timeout(rest),
            Err(crossbeam_channel::RecvTimeoutError::Timeout)
        ) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use hearth_testkit::datagram::recv_text as recv;

    #[test]
    fn notifications_reach_path_and_abstract_sockets() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("notify");
        let listener = UnixDatagram::bind(&path).expect("bind");
        let n = Notifier::connect(path.to_str().expect("utf-8")).expect("path");
        n.notify("READY=1").expect("send");
        assert_eq!(
            recv(&listener, Duration::from_secs(5)).as_deref(),
            Some("READY=1")
        );

        use std::os::linux::net::SocketAddrExt;
        let name = format!("hearth-test-{}", std::process::id());
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).expect("name");
        let abstract_ = UnixDatagram::bind_addr(&addr).expect("bind abstract");
        let n = Notifier::from_env(|k| (k == "NOTIFY_SOCKET").then(|| format!("@{name}")))
            .expect("set")
            .expect("abstract");
        n.notify("STOPPING=1").expect("send");
        assert_eq!(
            recv(&abstract_, Duration::from_secs(5)).as_deref(),
            Some("STOPPING=1")
        );

        assert!(Notifier::from_env(|_| None).is_none());
        assert!(Notifier::connect("relative/path").is_err());
        assert_eq!(status("a\nb"), "STATUS=a b");
    }

    #[test]
    fn the_watchdog_period_is_ours_only_for_our_pid() {
        let me = std::process::id().to_string();
        let env = |usec: &'static str, pid: Option<String>| {
            move |k: &str| match k {
                "WATCHDOG_USEC" => Some(usec.to_owned()),
                "WATCHDOG_PID" => pid.clone(),
                _ => None,
            }
        };
        assert_eq!(
            watchdog_period(env("30000000", None)),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            watchdog_period(env("500000", Some(me))),
            Some(Duration::from_millis(500))
        );
        assert_eq!(watchdog_period(env("500000", Some("1".into()))), None);
        assert_eq!(watchdog_period(env("0", None)), None);
        assert_eq!(watchdog_period(env("soon", None)), None);
    }

    /// A probe that blocks as long as the test holds the kernel wedged, the way a kernel
    /// worker that never takes its control message leaves `snapshot` waiting: the pings stop
    /// while it is wedged and come back when it answers again.
    #[test]
    fn pings_stop_while_the_kernel_does_not_answer_and_resume_after() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("notify");
        let listener = UnixDatagram::bind(&path).expect("bind");
        let notifier = Arc::new(Notifier::connect(path.to_str().expect("utf-8")).expect("path"));
        let wedged = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (answer_tx, answer_rx) = bounded::<()>(0);
        let w = wedged.clone();
        let probe = move |wait: Duration| {
            if w.load(std::sync::atomic::Ordering::Relaxed) {
                // Nothing is sent on it: a probe of a wedged kernel waits its whole time.
                answer_rx.recv_timeout(wait).ok()?;
            }
            Some("serving".to_owned())
        };
        let dog = Watchdog::start(notifier, Duration::from_millis(300), probe).expect("start");
        let count = |limit: Duration| {
            let end = Instant::now() + limit;
            let (mut pings, mut held) = (0, 0);
            while let Some(m) = recv(
                &listener,
                end.saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(1)),
            ) {
                if m.starts_with("WATCHDOG=1\nSTATUS=serving") {
                    pings += 1;
                } else if m.contains("watchdog pings held back") {
                    held += 1;
                }
                if Instant::now() >= end {
                    break;
                }
            }
            (pings, held)
        };
        let (pings, _) = count(Duration::from_millis(700));
        assert!(pings >= 4, "a live kernel is pinged every 100 ms: {pings}");
        wedged.store(true, std::sync::atomic::Ordering::Relaxed);
        // The probe in flight may still have answered; then only held-back lines.
        count(Duration::from_millis(150));
        let (pings, held) = count(Duration::from_millis(700));
        assert_eq!(pings, 0, "no ping while the kernel does not answer");
        assert!(held >= 3, "the status says why: {held}");
        wedged.store(false, std::sync::atomic::Ordering::Relaxed);
        drop(answer_tx);
        let (pings, _) = count(Duration::from_millis(700));
        assert!(pings >= 4, "pings resume: {pings}");
        let stopped = Instant::now();
        dog.stop();
        assert!(stopped.elapsed() < Duration::from_secs(1));
        assert!(
            count(Duration::from_millis(300)).0 <= 1,
            "no ping after stop"
        );
    }
}
