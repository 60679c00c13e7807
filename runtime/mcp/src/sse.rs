//! Server-sent events as Streamable HTTP uses them: each event's `data` lines form one
//! JSON-RPC message.

use std::io::BufRead;

/// Calls `on_event` with the data of each event until the stream ends or `on_event` returns
/// false. Comment lines and fields other than `data` are skipped.
pub(crate) fn read_events(reader: impl BufRead, mut on_event: impl FnMut(&str) -> bool) {
    let mut data = String::new();
    for line in reader.lines() {
        let Ok(line) = line else { return };
        if line.is_empty() {
            if !data.is_empty() && !on_event(&data) {
                return;
            }
            data.clear();
        } else if let Some(rest) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    if !data.is_empty() {
        on_event(&data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_join_data_lines_and_skip_the_rest() {
        let stream =
            ": comment\nevent: message\nid: 1\ndata: {\"a\":\ndata: 1}\n\ndata:x\n\n\ndata: tail";
        let mut seen = Vec::new();
        read_events(stream.as_bytes(), |d| {
            seen.push(d.to_owned());
            true
        });
        assert_eq!(seen, ["{\"a\":\n1}", "x", "tail"]);
        let mut first = Vec::new();
        read_events(stream.as_bytes(), |d| {
            first.push(d.to_owned());
            false
        });
        assert_eq!(first.len(), 1);
    }
}
