//! A script that floods `log()` with huge messages writes at most the bound to the log: the
//! burst of truncated messages, then one report of what was dropped.

use hearth_llm::adapter::{Adapter, LOG_BURST, LOG_PER_SECOND, MAX_LOG_MESSAGE_BYTES};
use hearth_testkit::within;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Capture {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("capture")).into_owned()
    }
}

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("capture").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

const FLOOD: &str = r#"
local M = {}
function M.transform_request(raw)
  local big = string.rep("x", 4 * 1024 * 1024)
  for i = 1, 2000 do log("info", big) end
  print("after", big)
  return raw
end
return M
"#;

#[test]
fn a_log_flood_writes_at_most_the_bound() {
    let capture = Capture::default();
    let sink = capture.clone();
    tracing::subscriber::set_global_default(
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(move || sink.clone())
            .finish(),
    )
    .expect("the only subscriber of this test binary");
    within(Duration::from_secs(30), move || {
        let adapter = Adapter::load("flood.lua", FLOOD).expect("loads");
        let started = Instant::now();
        adapter
            .transform_request("{}")
            .expect("the flood itself succeeds");
        let took = started.elapsed().as_secs_f64();
        let written = capture.0.lock().expect("capture").len();
        let text = capture.text();
        let logged = text.matches("[lua/").count();
        // 2001 messages of 4 MiB asked for (8 GiB): the burst gets through, plus what the
        // bucket refilled while the flood ran on a busy machine.
        let allowed = LOG_BURST as usize + (took * f64::from(LOG_PER_SECOND)).ceil() as usize + 1;
        assert!(
            (LOG_BURST as usize..=allowed).contains(&logged),
            "{logged} messages logged in {took:.2} s, at most {allowed}"
        );
        let per_message = MAX_LOG_MESSAGE_BYTES + 256;
        assert!(
            written <= (logged + 1) * per_message,
            "{written} bytes logged for {logged} messages"
        );
        assert!(text.contains("[truncated, 4194304 bytes in all]"));

        // Once the bucket refills, the next message comes with the count of the dropped ones.
        std::thread::sleep(Duration::from_millis(1100));
        let other = Adapter::load(
            "other.lua",
            "return {transform_request = function(r) log('warn', 'one more') return r end}",
        )
        .expect("loads");
        other.transform_request("{}").expect("runs");
        adapter.transform_request("{}").expect("runs again");
        let text = capture.text();
        assert!(text.contains("one more"), "each adapter has its own budget");
        let reported: usize = text
            .lines()
            .filter_map(|l| {
                l.split(" log messages dropped")
                    .next()
                    .filter(|_| l.contains(" log messages dropped"))
            })
            .filter_map(|head| head.rsplit(' ').next()?.parse::<usize>().ok())
            .sum();
        assert!(
            reported >= 2001 - logged,
            "{reported} drops reported, the first flood alone dropped {}",
            2001 - logged
        );
    });
}
