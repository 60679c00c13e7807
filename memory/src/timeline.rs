//! The conversation timeline shown to the model (SPEC §3.3): filled newest-first within the
//! context token budget, rendered oldest-first so the model reads it in order.

use std::fmt::{self, Write as _};

use crate::{ContextEvent, estimate_tokens};

/// First line of the rendered timeline ("conversation timeline").
pub const TIMELINE_HEADER: &str = "【对话时序】";
/// Responses are cut to this many runes in the timeline.
const RESPONSE_RUNES: usize = 120;

/// What `evt`'s line costs of the timeline's budget: the estimate of the line as rendered (its
/// clock's digits cost the same at any time of day).
pub fn line_tokens(evt: &ContextEvent) -> usize {
    let mut line =
        String::with_capacity(16 + evt.source.len() + evt.input.len() + RESPONSE_RUNES * 4);
    write_line(&mut line, evt, Clock(0));
    estimate_tokens(&line)
}

/// Appends `evt`'s line (with its leading line break) to `out`, stamped `clock`.
fn write_line(out: &mut String, evt: &ContextEvent, clock: Clock) {
    let _ = write!(out, "\n[{clock}] {}: {}", evt.source, evt.input);
    if !evt.tools_used.is_empty() {
        out.push_str(" → 调用工具: ");
        out.push_str(&evt.tools_used.join(", "));
    }
    if !evt.response.is_empty() {
        out.push_str(" → ");
        out.extend(evt.response.chars().take(RESPONSE_RUNES));
    }
}

/// Renders `events` (oldest first) within `budget_tokens`. At least one event is always shown
/// when there is any, so the model never loses the latest exchange to a tiny budget.
/// `offset_at` gives the user's offset east of UTC at an instant (Unix ms), which places each
/// `[HH:MM:SS]` stamp in their zone as it was then, across a daylight-saving change too.
pub fn format_timeline(
    events: &[ContextEvent],
    budget_tokens: usize,
    offset_at: impl Fn(i64) -> i64,
) -> String {
    if events.is_empty() {
        return String::new();
    }
    let mut left = budget_tokens.saturating_sub(estimate_tokens(TIMELINE_HEADER));
    let mut first = events.len();
    for (i, evt) in events.iter().enumerate().rev() {
        let cost = line_tokens(evt);
        if cost > left && first != events.len() {
            break;
        }
        left = left.saturating_sub(cost);
        first = i;
    }
    let shown = &events[first..];
    let mut out = String::with_capacity(
        TIMELINE_HEADER.len()
            + shown
                .iter()
                .map(|e| 16 + e.source.len() + e.input.len() + RESPONSE_RUNES * 4)
                .sum::<usize>(),
    );
    out.push_str(TIMELINE_HEADER);
    for evt in shown {
        // Written in place: the timeline is rebuilt every turn, one allocation per line added up.
        write_line(
            &mut out,
            evt,
            clock(evt.timestamp_ms, offset_at(evt.timestamp_ms)),
        );
    }
    out
}

fn clock(timestamp_ms: i64, utc_offset_secs: i64) -> Clock {
    Clock((timestamp_ms.div_euclid(1000) + utc_offset_secs).rem_euclid(86_400))
}

/// `HH:MM:SS` of a second of the day, written where it is shown.
struct Clock(i64);

impl fmt::Display for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0;
        write!(
            f,
            "{:02}:{:02}:{:02}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evt(ms: i64, input: &str) -> ContextEvent {
        ContextEvent::new(ms, "cli", input)
    }

    #[test]
    fn empty_gives_empty() {
        assert_eq!(format_timeline(&[], 1000, |_| 0), "");
    }

    #[test]
    fn renders_oldest_first_with_tools_and_truncated_response() {
        let mut a = evt(3_723_000, "hi");
        a.tools_used = vec!["t1".into(), "t2".into()];
        let b = evt(3_724_000, "again").with_response("x".repeat(200));
        let out = format_timeline(&[a, b], 100_000, |_| 0);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], TIMELINE_HEADER);
        assert_eq!(lines[1], "[01:02:03] cli: hi → 调用工具: t1, t2");
        assert_eq!(
            lines[2],
            format!("[01:02:04] cli: again → {}", "x".repeat(120))
        );
    }

    #[test]
    fn budget_keeps_newest_and_at_least_one() {
        let events: Vec<_> = (0..10)
            .map(|i| evt(i * 1000, &format!("event{i}")))
            .collect();
        let line = line_tokens(&events[9]);
        assert!(events.iter().all(|e| line_tokens(e) == line));
        let out = format_timeline(&events, estimate_tokens(TIMELINE_HEADER) + line * 3, |_| 0);
        assert_eq!(out.lines().count(), 4);
        assert!(out.contains("event9") && out.contains("event7") && !out.contains("event6"));
        let tiny = format_timeline(&events, 1, |_| 0);
        assert_eq!(tiny.lines().count(), 2);
        assert!(tiny.contains("event9"));
    }

    #[test]
    fn a_line_costs_the_estimate_of_what_is_rendered() {
        let mut e = evt(0, "hello there").with_response("y".repeat(300));
        e.tools_used = vec!["web_search".into()];
        let out = format_timeline(std::slice::from_ref(&e), 100_000, |_| 0);
        let line = out.strip_prefix(TIMELINE_HEADER).expect("header");
        assert_eq!(line_tokens(&e), estimate_tokens(line));
        // The reply is cut, so its length past the cut costs nothing.
        let longer = e.clone().with_response("y".repeat(3_000));
        assert_eq!(line_tokens(&longer), line_tokens(&e));
    }

    #[test]
    fn offset_shifts_clock() {
        let out = format_timeline(&[evt(0, "x")], 1000, |_| 8 * 3600);
        assert!(out.contains("[08:00:00]"));
    }

    /// Each stamp takes the offset of its own instant: two lines an hour apart across a
    /// daylight-saving change (at 01:00 UTC) read 01:30 and 03:30 local, not 02:30 and 03:30.
    #[test]
    fn each_stamp_takes_the_offset_of_its_instant() {
        let change = 3_600_000;
        let berlin = |ms: i64| if ms < change { 3_600 } else { 7_200 };
        let half_hour = 1_800_000;
        let events = [
            evt(change - half_hour, "before"),
            evt(change + half_hour, "after"),
        ];
        let out = format_timeline(&events, 100_000, berlin);
        assert!(out.contains("[01:30:00] cli: before"), "{out}");
        assert!(out.contains("[03:30:00] cli: after"), "{out}");
    }
}
