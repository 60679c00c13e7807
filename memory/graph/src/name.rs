//! Entity names and predicates as the graph accepts them.
//!
//! A name is what a user or a distiller calls a thing: kept as given for display, and compared
//! by its normal form (trimmed, inner whitespace collapsed, lower-cased), so "Lisbon" and
//! " lisbon " are one entity.

use crate::GraphError;

/// Longest accepted entity name, in characters: longer text is a clause, not a name.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest accepted predicate, in bytes.
pub const MAX_PREDICATE_LEN: usize = 32;

/// The display form of `name` (trimmed, whitespace collapsed) or why it is refused.
pub fn validate_name(name: &str) -> Result<String, GraphError> {
    let err = |reason| GraphError::InvalidName {
        name: name.to_owned(),
        reason,
    };
    if name.chars().any(char::is_control) {
        return Err(err("contains control characters"));
    }
    let display = name.split_whitespace().collect::<Vec<_>>().join(" ");
    if display.is_empty() {
        return Err(err("is empty"));
    }
    if display.chars().count() > MAX_NAME_CHARS {
        return Err(err("is longer than 64 characters"));
    }
    if !display.chars().any(char::is_alphanumeric) {
        return Err(err("has no letter or digit"));
    }
    Ok(display)
}

/// The comparison key of a display name.
pub fn normal_form(display: &str) -> String {
    display.to_lowercase()
}

/// `predicate` if it is a lower-case identifier (`a-z`, `0-9`, `_`, starting with a letter).
pub fn validate_predicate(predicate: &str) -> Result<&str, GraphError> {
    let err = |reason| GraphError::InvalidPredicate {
        predicate: predicate.to_owned(),
        reason,
    };
    if predicate.is_empty() || predicate.len() > MAX_PREDICATE_LEN {
        return Err(err("must be 1 to 32 bytes"));
    }
    if !predicate.starts_with(|c: char| c.is_ascii_lowercase())
        || !predicate
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(err("must be a lower-case identifier"));
    }
    Ok(predicate)
}

/// The key a forgotten fact is remembered by: normal forms of both ends and the predicate.
/// Stable across entity renames of case or spacing, so re-distillation finds the tombstone.
pub fn fact_key(subject: &str, predicate: &str, object: &str) -> String {
    format!(
        "{}\u{1f}{predicate}\u{1f}{}",
        normal_form(subject),
        normal_form(object)
    )
}

/// What a tombstone stores of a forgotten fact's key: a digest (the first 16 bytes of its
/// sha256, as hex), so the record that keeps a fact from coming back does not itself spell
/// out what was forgotten.
pub(crate) fn tombstone_key(fact_key: &str) -> String {
    use sha2::{Digest as _, Sha256};
    Sha256::digest(fact_key.as_bytes())[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tombstone_keys_are_stable_digests_that_do_not_spell_the_fact() {
        let key = fact_key("user", "lives_in", "Porto");
        let tomb = tombstone_key(&key);
        assert_eq!(tomb, tombstone_key(&fact_key("USER", "lives_in", "porto")));
        assert_eq!(tomb.len(), 32);
        assert!(!tomb.contains("porto"));
        assert_ne!(tomb, tombstone_key(&fact_key("user", "lives_in", "Lisbon")));
    }

    #[test]
    fn names_are_validated() {
        assert!(matches!(
            validate_name(""),
            Err(GraphError::InvalidName { .. })
        ));
        assert!(matches!(
            validate_name("   "),
            Err(GraphError::InvalidName { .. })
        ));
        assert!(matches!(
            validate_name("a\u{7}b"),
            Err(GraphError::InvalidName { .. })
        ));
        assert!(matches!(
            validate_name("a\nb"),
            Err(GraphError::InvalidName { .. })
        ));
        assert!(matches!(
            validate_name("!!"),
            Err(GraphError::InvalidName { .. })
        ));
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        assert!(matches!(
            validate_name(&long),
            Err(GraphError::InvalidName { .. })
        ));
        assert_eq!(
            validate_name(&"x".repeat(MAX_NAME_CHARS)).unwrap().len(),
            64
        );
        assert_eq!(validate_name("  New   York ").unwrap(), "New York");
        assert_eq!(validate_name("里斯本").unwrap(), "里斯本");
        assert_eq!(normal_form("New York"), "new york");
    }

    #[test]
    fn predicates_are_identifiers() {
        assert!(validate_predicate("lives_in").is_ok());
        assert!(validate_predicate("Lives").is_err());
        assert!(validate_predicate("").is_err());
        assert!(validate_predicate("1x").is_err());
        assert!(validate_predicate("a-b").is_err());
    }
}
