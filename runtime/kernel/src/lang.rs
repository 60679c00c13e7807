//! The language the kernel speaks to the user in. Every user-visible text of the kernel (an
//! error, a stop, the tool-round limit, a denial) and every placeholder it puts in front of the
//! model is written in the language of the input it answers: a user who writes English reads
//! English errors, and a small local model is not switched to Chinese by a continuation line.

use serde::{Deserialize, Serialize};

/// A language the kernel's texts exist in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// Chinese (the original kernel's language).
    Zh,
}

/// Share of CJK characters among an input's letters at and above which it is Chinese. A Han
/// character carries about a word, an English word about five letters, so a fifth of the
/// letters being Han means most of the words are: "帮我查一下 tokio 的文档" is Chinese, "what does
/// 你好 mean?" is English.
pub const CJK_SHARE: f64 = 0.2;

impl Lang {
    /// The language of `text`: Chinese when CJK characters make up at least [`CJK_SHARE`] of
    /// its letters, English otherwise (also for a text without letters).
    pub fn detect(text: &str) -> Lang {
        let (mut cjk, mut letters) = (0usize, 0usize);
        for c in text.chars() {
            if is_cjk(c) {
                cjk += 1;
                letters += 1;
            } else if c.is_alphabetic() {
                letters += 1;
            }
        }
        if letters > 0 && cjk as f64 >= CJK_SHARE * letters as f64 {
            Lang::Zh
        } else {
            Lang::En
        }
    }

    /// The language to answer `text` in: `configured` when the user set one, else detected.
    pub fn for_input(configured: Option<Lang>, text: &str) -> Lang {
        configured.unwrap_or_else(|| Lang::detect(text))
    }

    /// Parses a `language` setting: `zh`, `en`, or `auto` (`None`: detect per input).
    pub fn parse_setting(value: &str) -> Result<Option<Lang>, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "auto" | "" => Ok(None),
            "en" | "english" => Ok(Some(Lang::En)),
            "zh" | "chinese" | "zh-cn" | "zh-hans" => Ok(Some(Lang::Zh)),
            other => Err(format!(
                "unknown language {other:?}: expected \"auto\", \"en\" or \"zh\""
            )),
        }
    }
}

/// Han ideographs (with extension A and the compatibility block), kana and CJK punctuation.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x303F | 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xF900..=0xFAFF | 0xFF01..=0xFF60 | 0x20000..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cjk_share_decides() {
        assert_eq!(Lang::detect("你好，今天天气怎么样？"), Lang::Zh);
        assert_eq!(Lang::detect("帮我查一下 tokio 的文档"), Lang::Zh);
        assert_eq!(Lang::detect("What is the weather like today?"), Lang::En);
        assert_eq!(Lang::detect("what does 你好 mean?"), Lang::En);
        // Exactly at the share: 1 Han among 5 letters.
        assert_eq!(Lang::detect("abcd好"), Lang::Zh);
        assert_eq!(Lang::detect("abcde好"), Lang::En);
        assert_eq!(Lang::detect("12345 !?"), Lang::En);
        assert_eq!(Lang::detect(""), Lang::En);
    }

    #[test]
    fn a_configured_language_overrides_detection() {
        assert_eq!(Lang::for_input(Some(Lang::Zh), "hello there"), Lang::Zh);
        assert_eq!(Lang::for_input(Some(Lang::En), "你好"), Lang::En);
        assert_eq!(Lang::for_input(None, "你好"), Lang::Zh);
    }

    #[test]
    fn settings_parse_and_unknown_ones_are_refused() {
        assert_eq!(Lang::parse_setting("auto"), Ok(None));
        assert_eq!(Lang::parse_setting("ZH"), Ok(Some(Lang::Zh)));
        assert_eq!(Lang::parse_setting("en"), Ok(Some(Lang::En)));
        assert!(Lang::parse_setting("fr").unwrap_err().contains("\"fr\""));
    }
}
