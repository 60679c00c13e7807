//! Document names: relative paths under the root, `/`-separated, that can never leave it.
//!
//! Names given to [`create`](crate::KnowledgeBase::create) follow the strict rules of
//! [`validate_name`]. Documents the user makes by hand may carry any directory name the walk
//! accepts ([`walk_segment_problem`]), deeper than four levels too; reading or deleting them
//! needs only [`validate_lookup`], which still refuses anything that could point outside the root.

use crate::KnowledgeError;
use crate::limits::{MAX_NAME_BYTES, MAX_NAME_SEGMENTS, MAX_SEGMENT_CHARS, MAX_WALK_DEPTH};

/// The file that makes a directory a document.
pub const CONTENT_FILE: &str = "content.md";

/// Checks `name` against the rules for a new document: 1 to [`MAX_NAME_SEGMENTS`] segments
/// separated by `/`, each 1 to [`MAX_SEGMENT_CHARS`] characters of letters (any script), digits,
/// `-`, `_`, `.` or inner spaces, none starting with `.` (so no `.`, `..` or hidden entries),
/// at most [`MAX_NAME_BYTES`] bytes in all.
pub fn validate_name(name: &str) -> Result<(), KnowledgeError> {
    strict_problem(name).map_or(Ok(()), |reason| Err(invalid(name, reason)))
}

/// The category of a document: its parent path, `""` at the top level.
pub fn category_of(name: &str) -> &str {
    name.rsplit_once('/').map_or("", |(parent, _)| parent)
}

fn invalid(name: &str, reason: &'static str) -> KnowledgeError {
    KnowledgeError::InvalidName {
        name: name.to_owned(),
        reason,
    }
}

fn strict_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("the name is empty");
    }
    if name.starts_with('/') {
        return Some("the name must be relative (no leading '/')");
    }
    if name.len() > MAX_NAME_BYTES {
        return Some("the name is longer than 200 bytes");
    }
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() > MAX_NAME_SEGMENTS {
        return Some("the name has more than 4 segments");
    }
    segments.into_iter().find_map(strict_segment_problem)
}

fn strict_segment_problem(segment: &str) -> Option<&'static str> {
    if segment.is_empty() {
        return Some("a segment is empty (a leading, trailing or doubled '/')");
    }
    if segment.starts_with('.') {
        return Some("a segment starts with '.' ('.', '..' and hidden names are not allowed)");
    }
    if segment.chars().count() > MAX_SEGMENT_CHARS {
        return Some("a segment is longer than 64 characters");
    }
    if segment.starts_with(' ') || segment.ends_with(' ') {
        return Some("a segment starts or ends with a space");
    }
    if segment == CONTENT_FILE {
        return Some("'content.md' is reserved for the document file");
    }
    let allowed = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' ');
    if !segment.chars().all(allowed) {
        return Some("a segment may hold only letters, digits, '-', '_', '.' and spaces");
    }
    None
}

/// Checks a name given to read or delete a document. Looser than [`validate_name`], because
/// hand-made documents may be named otherwise, but still relative and free of `.`/`..`, hidden
/// and empty segments: whatever passes names a path inside the root.
pub(crate) fn validate_lookup(name: &str) -> Result<(), KnowledgeError> {
    if name.is_empty() {
        return Err(invalid(name, "the name is empty"));
    }
    if name.starts_with('/') {
        return Err(invalid(name, "the name must be relative (no leading '/')"));
    }
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() > MAX_WALK_DEPTH {
        return Err(invalid(name, "the name has more than 8 segments"));
    }
    match segments.into_iter().find_map(walk_segment_problem) {
        Some(reason) => Err(invalid(name, reason)),
        None => Ok(()),
    }
}

/// Why the walk will not take a directory name as part of a document name, if it will not.
pub(crate) fn walk_segment_problem(segment: &str) -> Option<&'static str> {
    if segment.is_empty() {
        return Some("a segment is empty (a leading, trailing or doubled '/')");
    }
    if segment.starts_with('.') {
        return Some("a segment starts with '.' ('.', '..' and hidden names are not allowed)");
    }
    if segment.chars().any(char::is_control) {
        return Some("a segment holds a control character");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_rules_accept_ordinary_and_chinese_names() {
        for ok in [
            "bread",
            "recipes/bread",
            "食谱/酸面包",
            "a/b/c/d",
            "v1.2 notes",
            "x_y-z",
        ] {
            assert!(validate_name(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn strict_rules_refuse_escapes_and_odd_shapes() {
        let long = "a".repeat(65);
        for bad in [
            "",
            "/abs",
            "../x",
            ".hidden",
            "a//b",
            "a/../b",
            "a/",
            "a/b/c/d/e",
            &long,
            "a\nb",
            "a/content.md",
            " a",
            "a*b",
        ] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
        assert!(validate_name(&"a".repeat(64)).is_ok());
    }

    #[test]
    fn lookup_rules_refuse_traversal_only() {
        assert!(validate_lookup("a!b/c d/e/f/g").is_ok());
        for bad in ["", "/x", "..", "a/../b", "a//b", ".git/x"] {
            assert!(validate_lookup(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn category_is_the_parent_path() {
        assert_eq!(category_of("bread"), "");
        assert_eq!(category_of("recipes/bread"), "recipes");
        assert_eq!(category_of("a/b/c"), "a/b");
    }
}
