//! The user's zone: the offset `agent.utc_offset_secs` sets, or the system's.
//!
//! A home server's clock is set to its owner's zone (`/etc/localtime`, or `TZ` for the
//! service), so without a configured offset "yesterday", the timeline's stamps and the days the
//! graph shows are the owner's, not UTC's. The system's offset is read once, at start: a
//! daylight-saving change takes effect when the daemon restarts.

use std::time::{SystemTime, UNIX_EPOCH};

/// Where the daemon's offset came from, for its start-up log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZoneSource {
    /// `agent.utc_offset_secs`.
    Configured,
    /// The system's zone (`TZ`, else `/etc/localtime`) at the time given.
    System,
    /// Nothing readable: UTC, with why.
    Fallback(String),
}

/// The offset the daemon uses, seconds east of UTC: `configured` when set, else the system's
/// zone now (`TZ` when set, as the C library reads it, else `/etc/localtime`), else UTC.
pub fn user_offset(configured: Option<i64>) -> (i64, ZoneSource) {
    if let Some(secs) = configured {
        return (secs, ZoneSource::Configured);
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let tz = std::env::var("TZ").ok().filter(|v| !v.is_empty());
    match system_offset(tz.as_deref(), now) {
        Ok(secs) => (secs, ZoneSource::System),
        Err(why) => (0, ZoneSource::Fallback(why)),
    }
}

/// The offset at `unix_secs` of the zone `tz` names (a `TZ` value: a zone name such as
/// `Europe/Lisbon`, a file path, or a POSIX rule such as `CET-1CEST,M3.5.0,M10.5.0/3`), or of
/// `/etc/localtime` when `None`.
pub fn system_offset(tz: Option<&str>, unix_secs: i64) -> Result<i64, String> {
    let zone = match tz {
        Some(spec) => tz::TimeZone::from_posix_tz(spec),
        None => tz::TimeZone::local(),
    }
    .map_err(|e| match tz {
        Some(spec) => format!("TZ={spec:?} is not a readable zone: {e}"),
        None => format!("/etc/localtime is not a readable zone: {e}"),
    })?;
    let kind = zone
        .find_local_time_type(unix_secs)
        .map_err(|e| format!("no local time at {unix_secs}: {e}"))?;
    Ok(i64::from(kind.ut_offset()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-01-01 00:00 and 2026-07-01 00:00 UTC.
    const WINTER: i64 = 1_767_225_600;
    const SUMMER: i64 = 1_782_864_000;

    #[test]
    fn a_configured_offset_wins() {
        assert_eq!(user_offset(Some(-3_600)), (-3_600, ZoneSource::Configured));
    }

    #[test]
    fn a_posix_rule_gives_the_offset_of_its_season() {
        let berlin = Some("CET-1CEST,M3.5.0,M10.5.0/3");
        assert_eq!(system_offset(berlin, WINTER), Ok(3_600));
        assert_eq!(system_offset(berlin, SUMMER), Ok(7_200));
        assert_eq!(system_offset(Some("JST-9"), SUMMER), Ok(32_400));
        assert_eq!(system_offset(Some("HST10"), WINTER), Ok(-36_000));
    }

    #[test]
    fn an_unreadable_zone_is_an_error_that_names_it() {
        let err = system_offset(Some("Nowhere/Atlantis"), WINTER).unwrap_err();
        assert!(err.contains("Nowhere/Atlantis"), "{err}");
    }
}
