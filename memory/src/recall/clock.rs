//! Calendar arithmetic for recalled memory: dates in injected blocks and ISO-8601 times in
//! benchmark files. Proleptic Gregorian, days counted from 1970-01-01 (Hinnant's
//! `days_from_civil` / `civil_from_days`), so no time-zone database is needed.

const MS_PER_DAY: i64 = 86_400_000;

pub(crate) use hearth_engine::days_from_civil;

/// The civil date of day `z` since 1970-01-01.
pub(crate) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

/// Day of the week of day `z` since 1970-01-01: 0 = Monday … 6 = Sunday (1970-01-01 was a
/// Thursday).
pub(crate) fn weekday_from_days(z: i64) -> i64 {
    (z + 3).rem_euclid(7)
}

/// Number of days in month `m` (1–12) of year `y`.
pub(crate) fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `YYYY-MM-DD HH:MM` of Unix milliseconds `ms`, shifted by `utc_offset_secs`.
pub fn format_minute(ms: i64, utc_offset_secs: i64) -> String {
    let local = ms.saturating_add(utc_offset_secs.saturating_mul(1000));
    let (y, m, d) = civil_from_days(local.div_euclid(MS_PER_DAY));
    let secs = local.rem_euclid(MS_PER_DAY) / 1000;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        secs / 3600,
        secs / 60 % 60
    )
}

/// Unix milliseconds of an ISO-8601 / RFC 3339 time: `YYYY-MM-DD`, optionally followed by `T`
/// (or a space) and `HH:MM[:SS[.fraction]]`, optionally followed by `Z` or `±HH[:]MM`. A time
/// without a zone is read as UTC. `None` when the text is not such a time.
pub fn parse_iso8601(text: &str) -> Option<i64> {
    let s = text.trim().as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(range)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    if s.len() < 10 || s[4] != b'-' || s[7] != b'-' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, mo, d) * MS_PER_DAY;
    let mut at = 10;
    if at < s.len() && (s[at] == b'T' || s[at] == b't' || s[at] == b' ') {
        if s.get(at + 3) != Some(&b':') {
            return None;
        }
        let (h, mi) = (num(at + 1..at + 3)?, num(at + 4..at + 6)?);
        if h > 23 || mi > 59 {
            return None;
        }
        ms += (h * 3600 + mi * 60) * 1000;
        at += 6;
        if s.get(at) == Some(&b':') {
            let sec = num(at + 1..at + 3)?;
            if sec > 60 {
                return None;
            }
            ms += sec * 1000;
            at += 3;
            if s.get(at) == Some(&b'.') || s.get(at) == Some(&b',') {
                let start = at + 1;
                let mut end = start;
                while end < s.len() && s[end].is_ascii_digit() {
                    end += 1;
                }
                if end == start {
                    return None;
                }
                let frac = &s[start..end.min(start + 3)];
                let mut millis = 0i64;
                for (i, digit) in frac.iter().enumerate() {
                    millis += i64::from(digit - b'0') * [100, 10, 1][i];
                }
                ms += millis;
                at = end;
            }
        }
    }
    match s.get(at) {
        None => Some(ms),
        Some(b'Z' | b'z') if at + 1 == s.len() => Some(ms),
        Some(&sign @ (b'+' | b'-')) => {
            let rest = &s[at + 1..];
            let (oh, om) = match rest.len() {
                5 if rest[2] == b':' => (num(at + 1..at + 3)?, num(at + 4..at + 6)?),
                4 => (num(at + 1..at + 3)?, num(at + 3..at + 5)?),
                2 => (num(at + 1..at + 3)?, 0),
                _ => return None,
            };
            let offset = (oh * 3600 + om * 60) * 1000;
            Some(if sign == b'+' {
                ms - offset
            } else {
                ms + offset
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times_parse_to_unix_millis() {
        assert_eq!(parse_iso8601("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_iso8601("2023-04-10T17:50:00Z"),
            Some(1_681_149_000_000)
        );
        assert_eq!(parse_iso8601("2023-04-10T17:50Z"), Some(1_681_149_000_000));
        assert_eq!(
            parse_iso8601("2023-04-10 17:50:00"),
            Some(1_681_149_000_000)
        );
        assert_eq!(
            parse_iso8601("2023-04-10T19:50:00.250+02:00"),
            Some(1_681_149_000_250)
        );
        assert_eq!(
            parse_iso8601("2023-04-10T12:50:00-0500"),
            Some(1_681_149_000_000)
        );
        assert_eq!(parse_iso8601("2023-04-10"), Some(1_681_084_800_000));
        assert_eq!(parse_iso8601("2000-02-29T00:00:00Z"), Some(951_782_400_000));
        for bad in [
            "",
            "yesterday",
            "2023-13-01",
            "2023-04-10T25:00",
            "2023-04-10T10:00X",
        ] {
            assert_eq!(parse_iso8601(bad), None, "{bad}");
        }
    }

    #[test]
    fn minutes_format_round_trips_with_offset() {
        assert_eq!(format_minute(1_681_149_000_000, 0), "2023-04-10 17:50");
        assert_eq!(
            format_minute(1_681_149_000_000, 8 * 3600),
            "2023-04-11 01:50"
        );
        assert_eq!(format_minute(0, -3600), "1969-12-31 23:00");
        assert_eq!(format_minute(951_782_400_000, 0), "2000-02-29 00:00");
    }
}
