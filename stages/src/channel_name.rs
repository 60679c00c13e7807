//! The output channel name rule and the tool names a channel generates.

use crate::StagesError;
use crate::function_name::{MAX_FUNCTION_NAME_LEN, is_function_name_byte, valid_function_name};

/// Prefix of a channel's send tool: `output_send__<channel>`.
pub const OUTPUT_SEND_PREFIX: &str = "output_send__";
/// Suffix of a channel's help tool: `output_send__<channel>_help`.
pub const OUTPUT_HELP_SUFFIX: &str = "_help";
/// The one global tool that lists the channels.
pub const LIST_CHANNELS_TOOL: &str = "output_list_channels";
/// Longest channel name: 64 minus the prefix (13) and the help suffix (5).
pub const MAX_CHANNEL_NAME_LEN: usize =
    MAX_FUNCTION_NAME_LEN - OUTPUT_SEND_PREFIX.len() - OUTPUT_HELP_SUFFIX.len();

/// `output_send__<channel>`.
pub fn send_tool_name(channel: &str) -> String {
    format!("{OUTPUT_SEND_PREFIX}{channel}")
}

/// `output_send__<channel>_help`.
pub fn help_tool_name(channel: &str) -> String {
    format!("{OUTPUT_SEND_PREFIX}{channel}{OUTPUT_HELP_SUFFIX}")
}

/// Check a channel name against the rule: characters `[A-Za-z0-9_-]`, and every function name it
/// generates must match `^[a-zA-Z0-9_-]{1,64}$`.
///
/// The help tool `output_send__<name>_help` is the longest name a channel generates, and the send
/// tool is a prefix of it, so validating the help name proves both (hence at most 46 characters).
/// A name ending in `_help` is refused as well: its send tool would be indistinguishable from the
/// help tool of another channel, and reply-only detection would misread it.
pub fn validate_channel_name(name: &str) -> Result<(), StagesError> {
    let reason = if name.is_empty() {
        Some("it is empty")
    } else if !name.bytes().all(is_function_name_byte) {
        Some("only A-Z, a-z, 0-9, '_' and '-' are allowed")
    } else if !valid_function_name(&help_tool_name(name)) {
        Some("its help tool output_send__<name>_help would exceed 64 characters (46 at most)")
    } else if name.ends_with(OUTPUT_HELP_SUFFIX) {
        Some("it must not end in \"_help\", which marks a channel's help tool")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(StagesError::InvalidChannelName {
            name: name.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// A kernel-handled output tool: `output_list_channels` or any `output_send__*` (help included).
pub fn is_output_tool(tool_name: &str) -> bool {
    tool_name == LIST_CHANNELS_TOOL || tool_name.starts_with(OUTPUT_SEND_PREFIX)
}

/// A delivery (not a help lookup): starts with `output_send__` and does not end with `_help`.
///
/// A batch made only of these is "reply only", which changes the LLM step's continuation prompt.
pub fn is_reply_only_tool(tool_name: &str) -> bool {
    tool_name.starts_with(OUTPUT_SEND_PREFIX) && !tool_name.ends_with(OUTPUT_HELP_SUFFIX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The rule restated without the implementation's helpers: character class, length bound
    /// derived from the 64-character function limit, and the `_help` exclusion.
    fn model(name: &str) -> bool {
        let class = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        let generated = format!("output_send__{name}_help");
        !name.is_empty()
            && name.chars().all(class)
            && generated.chars().count() <= 64
            && generated.chars().all(class)
            && !name.ends_with("_help")
    }

    #[test]
    fn edges() {
        assert_eq!(MAX_CHANNEL_NAME_LEN, 46);
        assert!(validate_channel_name("qq").is_ok());
        assert!(validate_channel_name("device-kitchen_1").is_ok());
        assert!(validate_channel_name(&"a".repeat(46)).is_ok());
        assert!(validate_channel_name(&"a".repeat(47)).is_err());
        assert!(validate_channel_name("").is_err());
        assert!(validate_channel_name("device/1").is_err());
        assert!(validate_channel_name("qq_help").is_err());
        assert!(validate_channel_name("help").is_ok());
        assert!(validate_channel_name("微信").is_err());
        assert!(matches!(
            validate_channel_name("a b"),
            Err(StagesError::InvalidChannelName { .. })
        ));
    }

    #[test]
    fn tool_name_classes() {
        assert!(is_reply_only_tool("output_send__qq"));
        assert!(!is_reply_only_tool("output_send__qq_help"));
        assert!(!is_reply_only_tool("output_list_channels"));
        assert!(!is_reply_only_tool("memory_search"));
        assert!(is_output_tool("output_list_channels"));
        assert!(is_output_tool("output_send__qq_help"));
        assert!(!is_output_tool("output_sendqq"));
        assert_eq!(help_tool_name("qq"), "output_send__qq_help");
        assert_eq!(send_tool_name("qq"), "output_send__qq");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn name_rule_matches_model(name in "[a-zA-Z0-9_\\-/. é]{0,50}|[a-z]{0,44}(_help)?") {
            let ok = validate_channel_name(&name).is_ok();
            prop_assert_eq!(ok, model(&name), "name {:?}", name);
            if ok {
                prop_assert!(valid_function_name(&send_tool_name(&name)));
                prop_assert!(valid_function_name(&help_tool_name(&name)));
            }
        }
    }
}
