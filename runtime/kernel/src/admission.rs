//! What an input's trust allows. Decided at the front door, before the input is journaled or
//! queued: only trusted callers (the CLI socket after its peer check, the kernel itself) may stop
//! the running task, claim the consolidation channel or raise an L4 interrupt. An external L4 is
//! not refused but clamped to L3, by the trust that is journaled with it, so it is L3 again
//! when it is resumed after a restart.

use crate::input::{InputEvent, Reply, skip};
use hearth_scheduler::{CRITICAL_CHANNEL, Level, clamp_plugin_level};

/// Why an input may not enter, or `None` when it may.
pub fn refusal(input: &InputEvent) -> Option<&'static str> {
    if input.trust.is_trusted() {
        return None;
    }
    if input.flag("stop") {
        return Some("only a trusted local caller may stop the running task");
    }
    if input.source == CRITICAL_CHANNEL || input.output_channel == CRITICAL_CHANNEL {
        return Some("only the kernel may use the consolidation channel");
    }
    None
}

/// Answers a refused input `skipped/denied` with the reason; returns false when it may enter.
pub fn deny_if_refused(input: &mut InputEvent) -> bool {
    let Some(why) = refusal(input) else {
        return false;
    };
    tracing::warn!(source = %input.source, trust = %input.trust, "input denied: {why}");
    input.send_reply(Reply {
        content: why.to_owned(),
        skipped: true,
        reason: Some(skip::DENIED.to_owned()),
        ..Reply::default()
    });
    true
}

/// The level an interrupt runs at: the declared one, clamped to L3 unless its caller is trusted.
pub fn interrupt_level(input: &InputEvent) -> Level {
    let declared = Level::from_payload(input.str_field("priority"));
    if input.trust.is_trusted() {
        declared
    } else {
        clamp_plugin_level(declared)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Trust;
    use serde_json::{Map, Value};

    fn input(source: &str, fields: &[(&str, Value)], trust: Trust) -> InputEvent {
        let mut payload = Map::new();
        payload.insert("content".into(), "x".into());
        for (k, v) in fields {
            payload.insert((*k).into(), v.clone());
        }
        InputEvent::new(source, payload).with_trust(trust)
    }

    #[test]
    fn only_trusted_callers_stop_claim_consolidation_or_keep_l4() {
        let stop = [("stop", Value::Bool(true))];
        let l4 = [("priority", Value::from("L4"))];
        for trust in [Trust::Local, Trust::Kernel] {
            assert_eq!(refusal(&input("cli", &stop, trust)), None);
            assert_eq!(refusal(&input(CRITICAL_CHANNEL, &[], trust)), None);
            assert_eq!(interrupt_level(&input("cli", &l4, trust)), Level::L4);
        }
        let ext = Trust::External;
        assert!(refusal(&input("qq", &stop, ext)).is_some());
        assert!(refusal(&input(CRITICAL_CHANNEL, &[], ext)).is_some());
        let routed = input("qq", &[], ext).with_output_channel(CRITICAL_CHANNEL);
        assert!(refusal(&routed).is_some());
        assert_eq!(
            refusal(&input("qq", &l4, ext)),
            None,
            "an external L4 is clamped, not refused"
        );
        assert_eq!(interrupt_level(&input("qq", &l4, ext)), Level::L3);
        assert_eq!(interrupt_level(&input("qq", &[], ext)), Level::L1);
    }

    #[test]
    fn a_denied_input_is_answered_skipped_denied() {
        let mut stop = input("qq", &[("stop", Value::Bool(true))], Trust::External);
        let rx = stop.reply_channel();
        assert!(deny_if_refused(&mut stop));
        let reply = rx.try_recv().expect("answered at once");
        assert!(reply.skipped);
        assert_eq!(reply.reason.as_deref(), Some(skip::DENIED));
        let mut ok = input("cli", &[("stop", Value::Bool(true))], Trust::Local);
        assert!(!deny_if_refused(&mut ok));
    }
}
