//! The function-name rule of OpenAI-style tool lists.

/// Longest function name upstream APIs accept.
pub const MAX_FUNCTION_NAME_LEN: usize = 64;

/// `^[a-zA-Z0-9_-]{1,64}$`, the name rule of OpenAI-compatible `tools[].function.name`.
///
/// One bad name makes the upstream reject the whole request (HTTP 400), so every name the kernel
/// offers to the model is checked against this.
pub fn valid_function_name(name: &str) -> bool {
    (1..=MAX_FUNCTION_NAME_LEN).contains(&name.len()) && name.bytes().all(is_function_name_byte)
}

/// `[a-zA-Z0-9_-]`; every such byte is ASCII, so byte length equals character length.
pub(crate) fn is_function_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn edges() {
        assert!(!valid_function_name(""));
        assert!(valid_function_name("a"));
        assert!(valid_function_name("memory_search-v2"));
        assert!(valid_function_name(&"x".repeat(64)));
        assert!(!valid_function_name(&"x".repeat(65)));
        assert!(!valid_function_name("a.b"));
        assert!(!valid_function_name("a b"));
        assert!(!valid_function_name("名字"));
        assert!(!valid_function_name("é"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn matches_char_model(name in "[a-zA-Z0-9_\\-. é名]{0,70}") {
            let allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
            let chars = name.chars().count();
            let model = (1..=64).contains(&chars) && name.chars().all(|c| allowed.contains(c));
            prop_assert_eq!(valid_function_name(&name), model);
        }
    }
}
