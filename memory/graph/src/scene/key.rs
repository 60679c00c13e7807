//! Scene keys: one normal form, so "Web/Main Room" and "web/main_room" name one scene.
//!
//! A key is lower-case `/`-separated segments; inside a segment only `[a-z0-9]`, CJK
//! (`U+4E00–U+9FFF`), `:`, `-` and `.` are kept, and every run of anything else (whitespace,
//! `_`, punctuation, other scripts) becomes one `_`. Segments are hierarchical: recall by `k`
//! also finds `k/…`.

use crate::GraphError;

/// Longest scene key, in bytes.
pub const MAX_SCENE_KEY_BYTES: usize = 96;

/// Longest run of digits read as a collision suffix (`#2`, `#3`, …).
const MAX_SUFFIX_DIGITS: usize = 9;

/// Whether `c` is kept inside a key segment as it is.
fn kept(c: char) -> bool {
    c.is_ascii_lowercase()
        || c.is_ascii_digit()
        || ('\u{4e00}'..='\u{9fff}').contains(&c)
        || matches!(c, ':' | '-' | '.')
}

/// One segment: kept characters, every run of others collapsed into one `_`, none at the ends.
fn segment(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut gap = false;
    for c in raw.chars() {
        if kept(c) {
            if gap && !out.is_empty() {
                out.push('_');
            }
            gap = false;
            out.push(c);
        } else {
            gap = true;
        }
    }
    out
}

/// The segments of `raw` normalised and joined, at most `max` bytes.
fn segments(raw: &str, max: usize) -> String {
    let lower = raw.trim().to_lowercase();
    let joined = lower
        .split('/')
        .map(segment)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("/");
    // A cut can end a segment on its `_` or leave a bare `/`; both are trimmed so that
    // normalising a normal key gives it back unchanged.
    joined[..joined.floor_char_boundary(max)]
        .trim_end_matches(['/', '_'])
        .to_owned()
}

/// Splits a trailing collision suffix (`#` and 1–9 digits) off `raw`.
fn split_suffix(raw: &str) -> (&str, Option<&str>) {
    let trimmed = raw.trim_end();
    if let Some(at) = trimmed.rfind('#') {
        let digits = &trimmed[at + 1..];
        if (1..=MAX_SUFFIX_DIGITS).contains(&digits.len())
            && digits.bytes().all(|b| b.is_ascii_digit())
        {
            return (&trimmed[..at], Some(&trimmed[at..]));
        }
    }
    (raw, None)
}

/// The normal form of a scene key: trimmed, lower-cased, split on `/`, each segment reduced to
/// `[a-z0-9]`, CJK, `:`, `-`, `.` with every other run collapsed into one `_` and none at its
/// ends, empty segments dropped, truncated to [`MAX_SCENE_KEY_BYTES`] on a char boundary.
///
/// Hearth keeps one thing the original's rule would have mangled: a trailing collision suffix
/// `#<digits>` (what [`crate::GraphStore::enter_scene`] appends when `auto:…` is taken), so the
/// key it hands out names the same scene when it comes back; the suffix stays within the 96
/// bytes. Normalising a normal key gives it back unchanged. A key with nothing left is
/// [`GraphError::InvalidSceneKey`].
pub fn normalize_scene_key(raw: &str) -> Result<String, GraphError> {
    let invalid = || GraphError::InvalidSceneKey {
        key: raw.to_owned(),
    };
    let (base, suffix) = split_suffix(raw);
    let suffix = suffix.unwrap_or("");
    let key = segments(base, MAX_SCENE_KEY_BYTES - suffix.len());
    if key.is_empty() {
        return Err(invalid());
    }
    Ok(key + suffix)
}

/// The normal form of one segment's worth of text, with no `/` hierarchy kept apart: what a
/// feature's kind and value are made of. Empty when nothing is left.
pub(crate) fn normalize_part(raw: &str) -> String {
    segments(raw, MAX_SCENE_KEY_BYTES)
}

/// The scene of a channel: `chan:` and the channel's normalised source (the whole key
/// normalised again, so it is within [`MAX_SCENE_KEY_BYTES`]).
pub fn channel_scene(source: &str) -> Result<String, GraphError> {
    prefixed("chan:", source)
}

/// The scene of a tool: `tool:` and the tool's normalised name.
pub fn tool_scene(tool: &str) -> Result<String, GraphError> {
    prefixed("tool:", tool)
}

fn prefixed(prefix: &str, raw: &str) -> Result<String, GraphError> {
    let inner = normalize_scene_key(raw)?;
    normalize_scene_key(&format!("{prefix}{inner}"))
}

/// Whether scene `key` is `prefix` itself or below it (`prefix/…`); `prefix2` is not.
pub fn scene_matches(prefix: &str, key: &str) -> bool {
    key.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// `key` without its collision suffix.
pub(crate) fn without_suffix(key: &str) -> &str {
    split_suffix(key).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keys_normalise_as_the_table_says() {
        let table = [
            ("  Web/Main Room ", "web/main_room"),
            ("chan:Telegram", "chan:telegram"),
            ("a__b  c", "a_b_c"),
            ("_lead/trail_", "lead/trail"),
            ("x//y///", "x/y"),
            ("Hello, World!", "hello_world"),
            ("项目/北京 会议", "项目/北京_会议"),
            ("v1.2-rc:3", "v1.2-rc:3"),
            ("café", "caf"),
            ("naïve plan", "na_ve_plan"),
            ("tabs\tand\nlines", "tabs_and_lines"),
            ("/ / a", "a"),
            ("auto:x#2", "auto:x#2"),
            ("auto:x #12", "auto:x#12"),
            ("a#b", "a_b"),
            ("a#2b", "a_2b"),
        ];
        for (raw, want) in table {
            assert_eq!(normalize_scene_key(raw).unwrap(), want, "{raw:?}");
        }
    }

    #[test]
    fn an_empty_key_is_refused() {
        for raw in ["", "   ", "///", "___", "!!! ???", "é/ü", "#2"] {
            assert!(
                matches!(
                    normalize_scene_key(raw),
                    Err(GraphError::InvalidSceneKey { .. })
                ),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn long_keys_are_cut_at_96_bytes_on_a_char_boundary() {
        // 31 CJK characters are 93 bytes; "a" makes 94; the 32nd character would end at 97.
        let raw = format!("a{}", "北".repeat(40));
        let key = normalize_scene_key(&raw).unwrap();
        assert_eq!(key.len(), 94);
        assert_eq!(key, format!("a{}", "北".repeat(31)));
        // A cut that lands right after a separator leaves neither `_` nor `/` at the end.
        let raw = format!("{}_b", "a".repeat(95));
        assert_eq!(normalize_scene_key(&raw).unwrap(), "a".repeat(95));
        let raw = format!("{}/b", "a".repeat(95));
        assert_eq!(normalize_scene_key(&raw).unwrap(), "a".repeat(95));
        // A suffix stays and the whole key still fits.
        let key = normalize_scene_key(&format!("{}#3", "a".repeat(200))).unwrap();
        assert_eq!(key, format!("{}#3", "a".repeat(94)));
    }

    #[test]
    fn channel_and_tool_scenes_are_prefixed_and_normal() {
        assert_eq!(channel_scene(" Telegram ").unwrap(), "chan:telegram");
        assert_eq!(tool_scene("Web Search").unwrap(), "tool:web_search");
        assert_eq!(channel_scene(&"x".repeat(200)).unwrap().len(), 96);
        assert!(channel_scene("  ").is_err());
    }

    #[test]
    fn prefixes_match_themselves_and_their_children_only() {
        assert!(scene_matches("k", "k"));
        assert!(scene_matches("k", "k/x"));
        assert!(scene_matches("k", "k/x/y"));
        assert!(!scene_matches("k", "k2"));
        assert!(!scene_matches("k", "kx/y"));
        assert!(!scene_matches("k/x", "k"));
    }

    fn allowed(key: &str) -> bool {
        let (base, suffix) = split_suffix(key);
        suffix.is_none_or(|s| s[1..].bytes().all(|b| b.is_ascii_digit()))
            && base.chars().all(|c| kept(c) || c == '_' || c == '/')
            && !base.starts_with(['_', '/'])
            && !base.ends_with(['_', '/'])
            && !base.contains("__")
            && !base.contains("//")
            && !base.contains("/_")
            && !base.contains("_/")
    }

    proptest! {
        #[test]
        fn normalising_is_idempotent_and_keeps_only_allowed_characters(
            raw in "(?s)[a-zA-Z0-9 _/:.#\\-\\t北京é!😀İ]{0,120}"
        ) {
            if let Ok(key) = normalize_scene_key(&raw) {
                prop_assert!(key.len() <= MAX_SCENE_KEY_BYTES, "{key:?}");
                prop_assert!(allowed(&key), "{key:?}");
                prop_assert_eq!(normalize_scene_key(&key).unwrap(), key);
            }
        }
    }
}
