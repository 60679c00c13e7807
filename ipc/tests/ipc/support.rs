//! Plumbing shared by the tests: raw shared mappings, and a child process running the
//! plugin-side peer with the segment at fd 3 and a doorbell at fd 4, killed if a test fails
//! before it exits.

use std::io::{BufRead, BufReader, Lines, Write};
use std::num::NonZeroUsize;
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::ptr::NonNull;

use nix::sys::memfd::{MFdFlags, memfd_create};
use nix::sys::mman::{MapFlags, ProtFlags, mmap, mmap_anonymous, munmap};

use hearth_ipc::{Doorbell, PluginSegment, Segment, SegmentConfig, inherit_plugin_fds};

/// A segment and a plugin-side attachment to it through a second fd and mapping, in this
/// process.
pub fn attached(config: SegmentConfig) -> (Segment, PluginSegment) {
    let segment = Segment::create(config).expect("segment");
    let fd = segment.fd().try_clone_to_owned().expect("dup");
    let plugin = PluginSegment::attach(fd).expect("attach");
    (segment, plugin)
}

/// A running peer process.
pub struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Peer {
    /// Spawn the peer with `args`, handing it `segment` at fd 3 and `doorbell` at fd 4. Waits
    /// for its first line, which reports a successful attach.
    pub fn spawn(segment: &Segment, doorbell: &Doorbell, args: &[&str]) -> Peer {
        let mut command = Command::new(env!("CARGO_BIN_EXE_hearth-shm-peer"));
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        inherit_plugin_fds(&mut command, segment.fd(), doorbell.as_fd());
        let mut child = command.spawn().expect("spawn the peer");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let mut peer = Peer {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
        };
        let first = peer.line();
        assert_eq!(
            first,
            format!("attached generation={}", segment.generation()),
            "the peer must attach to this segment"
        );
        peer
    }

    /// The next line the peer printed (panics at EOF).
    pub fn line(&mut self) -> String {
        match self.lines.next() {
            Some(Ok(line)) => line,
            other => panic!("peer ended its output early: {other:?}"),
        }
    }

    /// Send one line to the peer's stdin.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        writeln!(stdin, "{line}").expect("write to the peer");
        stdin.flush().expect("flush to the peer");
    }

    /// Wait for the peer to exit and assert it succeeded; returns its remaining lines.
    pub fn finish(mut self) -> Vec<String> {
        drop(self.stdin.take());
        let rest: Vec<String> = self
            .lines
            .by_ref()
            .map(|l| l.expect("utf-8 line"))
            .collect();
        let status = self.child.wait().expect("wait for the peer");
        assert!(
            status.success(),
            "peer failed with {status}; output {rest:?}"
        );
        rest
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // A test that panicked before `finish` must not leave a child behind.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One `MAP_SHARED` mapping, unmapped on drop (after every ring handle over it is gone:
/// callers drop handles first).
pub struct Mapping {
    pub base: NonNull<u8>,
    pub len: usize,
}

impl Mapping {
    pub fn of_file(fd: &OwnedFd, len: usize) -> Mapping {
        // SAFETY: a fresh shared mapping of a memfd we own; nothing else aliases it in Rust.
        let base = unsafe {
            mmap(
                None,
                NonZeroUsize::new(len).expect("non-zero"),
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
                fd,
                0,
            )
        }
        .expect("mmap memfd");
        Mapping {
            base: base.cast(),
            len,
        }
    }

    pub fn anonymous(len: usize) -> Mapping {
        // SAFETY: a fresh anonymous mapping; nothing else aliases it.
        let base = unsafe {
            mmap_anonymous(
                None,
                NonZeroUsize::new(len).expect("non-zero"),
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
            )
        }
        .expect("mmap anonymous");
        Mapping {
            base: base.cast(),
            len,
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` came from a successful mmap, unmapped once.
        unsafe { munmap(self.base.cast(), self.len) }.expect("munmap");
    }
}

pub fn memfd_of(len: usize) -> OwnedFd {
    let fd = memfd_create(c"hearth-ring-test", MFdFlags::MFD_CLOEXEC).expect("memfd_create");
    nix::unistd::ftruncate(&fd, len as i64).expect("ftruncate");
    fd
}
