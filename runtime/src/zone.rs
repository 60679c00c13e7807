//! The user's zone: the offset `agent.utc_offset_secs` sets, or the system's.
//!
//! A home server's clock is set to its owner's zone (`/etc/localtime`, or `TZ` for the
//! service), so without a configured offset "yesterday", the timeline's stamps and the days the
//! graph shows are the owner's, not UTC's. The zone's rules are read at start and followed: a
//! daylight-saving change applies from the instant it happens, and a new `/etc/localtime`
//! (`timedatectl set-timezone`) within a minute.

use hearth_engine::LocalZone;

/// A zone that cannot be read: what named it (`TZ="…"` or a file) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what} is not a readable zone: {reason}")]
pub struct ZoneError {
    /// `TZ="…"`, or the zone file's path.
    pub what: String,
    /// What the zone reader said.
    pub reason: String,
}

/// Where the daemon's zone came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZoneSource {
    /// `agent.utc_offset_secs`.
    Configured,
    /// The system's zone (`TZ`, else `/etc/localtime`), followed through daylight saving.
    System,
    /// Nothing readable: UTC, with why.
    Fallback(ZoneError),
}

/// The zone the daemon reckons in, and where it came from.
#[derive(Clone, Debug)]
pub struct UserZone {
    /// The zone every part of the daemon asks.
    pub zone: LocalZone,
    /// Where it came from, for the start-up log and `hearth status`.
    pub source: ZoneSource,
}

impl UserZone {
    /// `configured` (seconds east of UTC) when set, else the system's zone (`TZ` when set, as
    /// the C library reads it, else `/etc/localtime`), its rules followed through daylight
    /// saving (and `/etc/localtime` through a change of zone), else UTC.
    pub fn resolve(configured: Option<i64>) -> Self {
        if let Some(secs) = configured {
            return Self {
                zone: LocalZone::fixed(secs),
                source: ZoneSource::Configured,
            };
        }
        let tz = std::env::var("TZ").ok().filter(|v| !v.is_empty());
        match system_zone(tz.as_deref()) {
            Ok(zone) => Self {
                zone,
                source: ZoneSource::System,
            },
            Err(why) => Self {
                zone: LocalZone::default(),
                source: ZoneSource::Fallback(why),
            },
        }
    }

    /// The zone as `hearth status` shows it: the offset at `now_ms`, and where it came from
    /// (`configured`, `system`, or `utc` with why the system's could not be read).
    pub fn status(&self, now_ms: i64) -> serde_json::Value {
        let from = match &self.source {
            ZoneSource::Configured => "configured",
            ZoneSource::System => "system",
            ZoneSource::Fallback(_) => "utc",
        };
        let mut out =
            serde_json::json!({"utc_offset_secs": self.zone.offset_at(now_ms), "from": from});
        if let ZoneSource::Fallback(why) = &self.source {
            out["why"] = why.to_string().into();
        }
        out
    }
}

/// The file the system's zone is read from when `TZ` is not set.
const LOCALTIME: &str = "/etc/localtime";
/// How often, at most, `/etc/localtime` is looked at again for a change of zone
/// (`timedatectl set-timezone` replaces it).
const RECHECK_MS: i64 = 60_000;

/// The zone `tz` names (a `TZ` value: a zone name such as `Europe/Lisbon`, a file path, or a
/// POSIX rule such as `CET-1CEST,M3.5.0,M10.5.0/3`), or `/etc/localtime` when `None` (read
/// again when it changes), checked to answer for now.
pub fn system_zone(tz: Option<&str>) -> Result<LocalZone, ZoneError> {
    match tz {
        Some(spec) => {
            let rules = Rules::load(spec, || format!("TZ={spec:?}"))?;
            Ok(LocalZone::following(move |ms| rules.offset_at(ms)))
        }
        None => watched(std::path::Path::new(LOCALTIME), RECHECK_MS),
    }
}

/// A zone's rules, and the offset of an instant they cannot place (beyond their range): the
/// offset when they were read.
struct Rules {
    zone: tz::TimeZone,
    fallback: i64,
}

impl Rules {
    /// The rules `spec` names (a `TZ` value or a file path); `what` names it in an error.
    fn load(spec: &str, what: impl Fn() -> String) -> Result<Self, ZoneError> {
        let unreadable = |reason: String| ZoneError {
            what: what(),
            reason,
        };
        let zone = tz::TimeZone::from_posix_tz(spec).map_err(|e| unreadable(e.to_string()))?;
        let now = hearth_engine::now_ms().div_euclid(1_000);
        let fallback =
            Self::at(&zone, now).map_err(|e| unreadable(format!("no local time now: {e}")))?;
        Ok(Self { zone, fallback })
    }

    fn at(zone: &tz::TimeZone, unix_secs: i64) -> Result<i64, tz::error::TzError> {
        Ok(i64::from(zone.find_local_time_type(unix_secs)?.ut_offset()))
    }

    fn offset_at(&self, ms: i64) -> i64 {
        Self::at(&self.zone, ms.div_euclid(1_000)).unwrap_or(self.fallback)
    }
}

/// What tells one version of a zone file from another: where its link points, and the
/// target's identity, size and modification time.
type FileMark = (
    Option<std::path::PathBuf>,
    Option<(u64, u64, std::time::SystemTime)>,
);

fn file_mark(file: &std::path::Path) -> FileMark {
    use std::os::unix::fs::MetadataExt;
    let target = std::fs::read_link(file).ok();
    let meta = std::fs::metadata(file)
        .ok()
        .and_then(|m| Some((m.ino(), m.len(), m.modified().ok()?)));
    (target, meta)
}

/// The zone in `file`, looked at again at most once per `recheck_ms` and read again when it
/// changed; a replacement that cannot be read keeps the zone before it.
fn watched(file: &std::path::Path, recheck_ms: i64) -> Result<LocalZone, ZoneError> {
    let load = |file: &std::path::Path| {
        let spec = file.to_string_lossy();
        Rules::load(&spec, || spec.to_string())
    };
    let rules = load(file)?;
    let state = parking_lot::Mutex::new((rules, file_mark(file), hearth_engine::now_ms()));
    let file = file.to_path_buf();
    Ok(LocalZone::following(move |ms| {
        let mut state = state.lock();
        let now = hearth_engine::now_ms();
        if now.saturating_sub(state.2) >= recheck_ms {
            state.2 = now;
            let mark = file_mark(&file);
            if mark != state.1 {
                state.1 = mark;
                match load(&file) {
                    Ok(rules) => {
                        tracing::info!(file = %file.display(), "the system's zone changed");
                        state.0 = rules;
                    }
                    Err(e) => tracing::warn!("{e}; the zone before it is kept"),
                }
            }
        }
        state.0.offset_at(ms)
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
        let UserZone { zone, source } = UserZone::resolve(Some(-3_600));
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

    /// A TZif file (version 1) of one fixed offset.
    fn tzif(offset: i32, name: &[u8]) -> Vec<u8> {
        let mut out = b"TZif".to_vec();
        out.extend_from_slice(&[0; 16]);
        // UT/local and standard/wall indicators, leap seconds, transitions, types, name bytes.
        for count in [0, 0, 0, 0, 1, name.len() + 1] {
            out.extend_from_slice(&u32::try_from(count).unwrap().to_be_bytes());
        }
        out.extend_from_slice(&offset.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(name);
        out.push(0);
        out
    }

    /// Replaces `file` as `timedatectl` does: a new file renamed over the old one.
    fn replace(file: &std::path::Path, bytes: &[u8]) {
        let fresh = file.with_extension("new");
        std::fs::write(&fresh, bytes).expect("write");
        std::fs::rename(&fresh, file).expect("rename");
    }

    #[test]
    fn a_changed_zone_file_is_read_again_and_a_broken_one_keeps_the_zone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("localtime");
        replace(&file, &tzif(32_400, b"JST"));
        let zone = watched(&file, 0).expect("a zone");
        assert_eq!(zone.offset_at(0), 32_400);
        replace(&file, &tzif(3_600, b"CET"));
        assert_eq!(zone.offset_at(0), 3_600, "the new zone is read");
        replace(&file, b"not a zone file");
        assert_eq!(zone.offset_at(0), 3_600, "a broken file keeps the zone");
        // Looked at once a minute, a change waits for its minute.
        let slow = watched(&file, 60_000);
        assert!(slow.is_err(), "a broken file is refused at start");
        replace(&file, &tzif(32_400, b"JST"));
        let slow = watched(&file, 60_000).expect("a zone");
        replace(&file, &tzif(3_600, b"CET"));
        assert_eq!(slow.offset_at(0), 32_400);
    }

    #[test]
    fn an_unreadable_zone_is_an_error_that_names_it() {
        let err = system_zone(Some("Nowhere/Atlantis")).unwrap_err();
        assert!(err.to_string().contains("Nowhere/Atlantis"), "{err}");
    }
}
