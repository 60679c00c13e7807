//! A flood of `hearth send` calls: every one gets exactly one reply, none hangs.

use crate::harness::{Daemon, source, within};
use hearth_testkit::llm_server::LlmServer;
use std::time::Duration;

#[test]
fn three_hundred_concurrent_sends_each_get_one_reply() {
    within(Duration::from_secs(180), || {
        let server = LlmServer::start();
        // Room for every client at once (the default cap of 256 is tested on its own).
        let config = format!(
            "{}\n[socket]\nmax_connections = 400\n",
            source("remote", &server.base_url, 0)
        );
        let daemon = Daemon::start(&config);
        let children: Vec<_> = (0..300)
            .map(|i| {
                daemon
                    .cli()
                    .args(["send", &format!("message number {i}")])
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("spawn")
            })
            .collect();
        let mut answered = 0;
        let mut queue_full = 0;
        for child in children {
            let out = child.wait_with_output().expect("exits");
            let text = String::from_utf8_lossy(&out.stdout);
            let err = String::from_utf8_lossy(&out.stderr);
            match out.status.code() {
                Some(0) => {
                    assert!(text.contains("default answer"), "{text}");
                    answered += 1;
                }
                Some(3) => {
                    assert!(err.contains("queue_full"), "{err}");
                    queue_full += 1;
                }
                other => panic!("unexpected exit {other:?}: {text} {err}"),
            }
        }
        assert_eq!(answered + queue_full, 300);
        assert_eq!(
            server.seen().len(),
            answered,
            "every answered send reached the model once"
        );
    });
}
