//! The `Retry-After` header of a 429 or 503 (RFC 9110 §10.2.3): either a number of seconds or
//! an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`), turned into the wait from now.

use hearth_engine::days_from_civil;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The wait `value` asks for, seen at `now`; `None` when it is neither form. A date already past
/// is a wait of zero.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = UNIX_EPOCH + Duration::from_secs(parse_imf_fixdate(value)?);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Seconds since the Unix epoch of an IMF-fixdate, the one date form servers must send.
fn parse_imf_fixdate(value: &str) -> Option<u64> {
    // "Sun, 06 Nov 1994 08:49:37 GMT"
    let rest = value.split_once(", ")?.1;
    let mut parts = rest.split(' ');
    let day: u64 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (clock.next()??, clock.next()??, clock.next()??);
    if parts.next()? != "GMT" || parts.next().is_some() || clock.next().is_some() {
        return None;
    }
    if !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 || year < 1970 {
        return None;
    }
    let days = days_from_civil(year, month, i64::try_from(day).ok()?);
    u64::try_from(days)
        .ok()?
        .checked_mul(86_400)?
        .checked_add(h * 3600 + m * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_http_dates_become_waits() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(parse_retry_after(" 5 ", now), Some(Duration::from_secs(5)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:50:40 GMT", now),
            Some(Duration::from_secs(63))
        );
        assert_eq!(
            parse_retry_after("Tue, 01 Dec 2026 17:00:00 GMT", UNIX_EPOCH),
            Some(Duration::from_secs(1_796_144_400))
        );
        for bad in [
            "",
            "soon",
            "-1",
            "Sun, 06 Nov 1994 08:49:37 PST",
            "Sun, 32 Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad:?}");
        }
    }
}
