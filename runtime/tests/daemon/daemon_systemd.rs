//! `hearthd` under the systemd notify protocol, against a real datagram socket: `READY=1` only
//! once the client socket accepts, `WATCHDOG=1` at the period `WATCHDOG_USEC` asks for while
//! the kernel answers, `STOPPING=1` on SIGTERM.

use crate::harness::{Daemon, signal, within};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::time::{Duration, Instant};

use hearth_testkit::datagram::recv_text as recv;

#[test]
fn ready_after_the_socket_accepts_watchdog_while_the_kernel_answers_stopping_on_sigterm() {
    within(Duration::from_secs(90), || {
        let dir = Daemon::fresh_dir();
        let notify = dir.join("notify.sock");
        let listener = UnixDatagram::bind(&notify).expect("bind");
        let mut child = Daemon::command(&dir, "")
            .env("NOTIFY_SOCKET", &notify)
            .env("WATCHDOG_USEC", "600000")
            .env_remove("WATCHDOG_PID")
            .spawn()
            .expect("hearthd starts");
        let ready = recv(&listener, Duration::from_secs(60)).expect("a notification");
        assert!(ready.starts_with("READY=1\nSTATUS=serving "), "{ready:?}");
        // At READY the socket already accepts: no retry.
        UnixStream::connect(dir.join("hearth.sock")).expect("accepts at READY");

        let start = Instant::now();
        let mut pings = 0;
        while start.elapsed() < Duration::from_millis(1500) {
            let m = recv(&listener, Duration::from_secs(2)).expect("the watchdog keeps pinging");
            assert!(
                m.starts_with("WATCHDOG=1\nSTATUS=serving; 0 queued"),
                "{m:?}"
            );
            pings += 1;
        }
        // A third of the 600 ms period: 200 ms apart, so about 7 in 1.5 s.
        assert!((5..=10).contains(&pings), "{pings} pings in 1.5 s");

        signal(child.id(), "TERM");
        let stopping = loop {
            let m = recv(&listener, Duration::from_secs(10)).expect("STOPPING=1");
            if !m.starts_with("WATCHDOG=1") {
                break m;
            }
        };
        assert!(
            stopping.starts_with("STOPPING=1\nSTATUS=stopping"),
            "{stopping:?}"
        );
        let status = child.wait().expect("exits");
        assert!(status.success(), "{status}");
        assert!(
            recv(&listener, Duration::from_millis(300)).is_none(),
            "nothing after STOPPING"
        );
        let _ = std::fs::remove_dir_all(&dir);
    });
}

/// The message the daemon's test hook (`HEARTH_TEST_WEDGE_ON`) wedges the kernel's worker on.
const WEDGE: &str = "wedge the kernel now";

#[test]
fn a_really_wedged_kernel_worker_stops_the_watchdog_pings_that_ran_since_ready() {
    within(Duration::from_secs(90), || {
        let dir = Daemon::fresh_dir();
        let notify = dir.join("notify.sock");
        let listener = UnixDatagram::bind(&notify).expect("bind");
        let child = Daemon::command(&dir, "")
            .env("NOTIFY_SOCKET", &notify)
            .env("WATCHDOG_USEC", "600000")
            .env_remove("WATCHDOG_PID")
            .env("HEARTH_TEST_WEDGE_ON", WEDGE)
            .spawn()
            .expect("hearthd starts");
        let ready = recv(&listener, Duration::from_secs(60)).expect("a notification");
        assert!(ready.starts_with("READY=1\n"), "{ready:?}");
        let daemon = Daemon::adopt(child, dir.clone());
        for _ in 0..3 {
            let m = recv(&listener, Duration::from_secs(2)).expect("pings");
            assert!(
                m.starts_with("WATCHDOG=1\n"),
                "a live kernel is pinged: {m:?}"
            );
        }
        // Nothing else was asked of it: its worker is parked inside the on_input stage.
        let (mut sender, _out) = daemon.spawn(&["send", WEDGE]);
        let sent = Instant::now();
        let held = loop {
            let m = recv(&listener, Duration::from_secs(5)).expect("notifications go on");
            if m.contains("watchdog pings held back") {
                break m;
            }
            assert!(m.starts_with("WATCHDOG=1\n"), "{m:?}");
            assert!(
                sent.elapsed() < Duration::from_secs(30),
                "the pings never stopped"
            );
        };
        assert!(
            held.starts_with("STATUS=the kernel has not answered"),
            "{held:?}"
        );
        // Three periods with no ping: systemd's 600 ms interval passes without WATCHDOG=1.
        let end = Instant::now() + Duration::from_millis(1800);
        let (mut pings, mut held_lines) = (0, 0);
        while let Some(m) = recv(
            &listener,
            end.saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1)),
        ) {
            if m.starts_with("WATCHDOG=1") {
                pings += 1;
            } else if m.contains("held back") {
                held_lines += 1;
            }
            if Instant::now() >= end {
                break;
            }
        }
        assert_eq!(pings, 0, "no WATCHDOG=1 from a wedged kernel");
        assert!(held_lines >= 3, "the status keeps saying why: {held_lines}");
        let _ = sender.kill();
        let _ = sender.wait();
        // A wedged kernel never finishes a graceful stop; the data dir goes with the daemon.
        daemon.kill9();
        let _ = std::fs::remove_dir_all(&dir);
    });
}
