//! The user's zone: the offset `agent.utc_offset_secs` sets, or the system's.
//!
//! A home server's clock is set to its owner's zone (`/etc/localtime`, or `TZ` for the
//! service), so without a configured offset "yesterday", the timeline's stamps and the days the
//! graph shows are the owner's, not UTC's. The zone's rules are read once, at start, and
//! followed: a daylight-saving change applies from the instant it happens.

use hearth_engine::LocalZone;

/// Where the daemon's offset came from, for its start-up log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZoneSource {
    /// `agent.utc_offset_secs`.
    Configured,
    /// The system's zone (`TZ`, else `/etc/localtime`), followed through daylight saving.
    System,
    /// Nothing readable: UTC, with why.
    Fallback(String),
}

/// The zone the daemon reckons in: `configured` (seconds east of UTC) when set, else the
/// system's zone (`TZ` when set, as the C library reads it, else `/etc/localtime`), its rules
/// read once and followed through daylight saving, else UTC.
pub fn user_zone(configured: Option<i64>) -> (LocalZone, ZoneSource) {
    if let Some(secs) = configured {
        return (LocalZone::fixed(secs), ZoneSource::Configured);
    }
    let tz = std::env::var("TZ").ok().filter(|v| !v.is_empty());
    match system_zone(tz.as_deref()) {
        Ok(zone) => (zone, ZoneSource::System),
        Err(why) => (LocalZone::default(), ZoneSource::Fallback(why)),
    }
}

/// The zone as `hearth status` shows it: the offset now, and where it came from
/// (`configured`, `system`, or `utc` with why the system's could not be read).
pub fn status(zone: &LocalZone, source: &ZoneSource, now_ms: i64) -> serde_json::Value {
    let (from, why) = match source {
        ZoneSource::Configured => ("configured", None),
        ZoneSource::System => ("system", None),
        ZoneSource::Fallback(why) => ("utc", Some(why.as_str())),
    };
    let mut out = serde_json::json!({"utc_offset_secs": zone.offset_at(now_ms), "from": from});
    if let Some(why) = why {
        out["why"] = why.into();
    }
    out
}

/// The zone `tz` names (a `TZ` value: a zone name such as `Europe/Lisbon`, a file path, or a
/// POSIX rule such as `CET-1CEST,M3.5.0,M10.5.0/3`), or `/etc/localtime` when `None`,
/// checked to answer for now.
pub fn system_zone(tz: Option<&str>) -> Result<LocalZone, String> {
    let rules = match tz {
        Some(spec) => tz::TimeZone::from_posix_tz(spec),
        None => tz::TimeZone::local(),
    }
    .map_err(|e| match tz {
        Some(spec) => format!("TZ={spec:?} is not a readable zone: {e}"),
        None => format!("/etc/localtime is not a readable zone: {e}"),
    })?;
    let now = hearth_engine::now_ms().div_euclid(1_000);
    let at = |rules: &tz::TimeZone, unix_secs: i64| {
        rules
            .find_local_time_type(unix_secs)
            .map(|kind| i64::from(kind.ut_offset()))
    };
    // An instant the rules cannot place (beyond their range) keeps the offset of the start.
    let fallback = at(&rules, now).map_err(|e| format!("no local time now: {e}"))?;
    Ok(LocalZone::following(move |ms| {
        at(&rules, ms.div_euclid(1_000)).unwrap_or(fallback)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-01-01 00:00 and 2026-07-01 00:00 UTC.
    const WINTER: i64 = 1_767_225_600;
    const SUMMER: i64 = 1_782_864_000;

    fn offset(tz: &str, unix_secs: i64) -> i64 {
        system_zone(Some(tz))
            .expect("a zone")
            .offset_at(unix_secs * 1_000)
    }

    #[test]
    fn a_configured_offset_wins() {
        let (zone, source) = user_zone(Some(-3_600));
        assert_eq!(
            (zone.offset_at(WINTER), source),
            (-3_600, ZoneSource::Configured)
        );
        assert_eq!(zone.offset_at(SUMMER), -3_600);
    }

    #[test]
    fn a_posix_rule_is_followed_through_daylight_saving() {
        let berlin = "CET-1CEST,M3.5.0,M10.5.0/3";
        assert_eq!(offset(berlin, WINTER), 3_600);
        assert_eq!(offset(berlin, SUMMER), 7_200);
        // 2026-03-29: clocks go forward at 01:00 UTC.
        assert_eq!(offset(berlin, 1_774_746_000 - 1), 3_600);
        assert_eq!(offset(berlin, 1_774_746_000), 7_200);
        assert_eq!(offset("JST-9", SUMMER), 32_400);
        assert_eq!(offset("HST10", WINTER), -36_000);
    }

    #[test]
    fn an_unreadable_zone_is_an_error_that_names_it() {
        let err = system_zone(Some("Nowhere/Atlantis")).unwrap_err();
        assert!(err.contains("Nowhere/Atlantis"), "{err}");
    }
}
