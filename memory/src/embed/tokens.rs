//! Word tokens for sparse vectors and full-text search: jieba segmentation (Chinese words, ASCII
//! runs kept whole), lower-cased, without stop words, whitespace or punctuation; plus overlapping
//! CJK character bigrams, which still match when jieba cuts a phrase differently in two texts.

use std::sync::OnceLock;

use jieba_rs::Jieba;

/// The process's one segmenter: `Jieba::new()` builds its dictionary trie (~0.2 s), so it is
/// built once, on first use.
pub fn jieba() -> &'static Jieba {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    JIEBA.get_or_init(Jieba::new)
}

/// Function words that carry no topic, Chinese and English. Negations (不, 没有, not, no) are kept:
/// they change what a memory says.
const STOP_WORDS: &[&str] = &[
    // Chinese
    "的", "了", "着", "过", "是", "在", "和", "与", "及", "或", "也", "都", "就", "而", "之", "其",
    "这", "那", "这个", "那个", "这些", "那些", "一个", "有", "被", "把", "让", "给", "吗", "呢",
    "吧", "啊", "呀", "哦", "嗯", "么", "很", "还", "又", "再", "但", "但是", "所以", "因为",
    "如果", "并", "并且", "以及", "等", "等等", "对", "于", "从", "向", "为", "为了", "由", "我",
    "你", "他", "她", "它", "我们", "你们", "他们", "她们", "它们", "自己", "啦", "嘛", "哈",
    // English
    "a", "an", "the", "of", "is", "are", "was", "were", "be", "been", "being", "am", "and", "or",
    "to", "in", "on", "at", "by", "for", "with", "from", "as", "into", "that", "this", "these",
    "those", "it", "its", "i", "me", "my", "we", "our", "you", "your", "he", "him", "his", "she",
    "her", "they", "them", "their", "do", "does", "did", "have", "has", "had", "can", "could",
    "will", "would", "shall", "should", "may", "might", "if", "then", "so", "but", "which", "what",
    "there", "here", "s", "t", "'s", "just", "than", "too", "very",
];

/// Whether `word` (already lower-cased) is a stop word.
pub fn is_stop_word(word: &str) -> bool {
    static SET: OnceLock<std::collections::HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| STOP_WORDS.iter().copied().collect())
        .contains(word)
}

/// Whether `c` is written without spaces between words (Han, kana, Hangul).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF      // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0x20000..=0x2EBEF  // CJK extensions B-F
        | 0x3040..=0x30FF    // hiragana, katakana
        | 0xAC00..=0xD7AF    // Hangul syllables
    )
}

/// Full-width ASCII (ＡＢＣ１２３) to ASCII and the ideographic space to a space, so both widths
/// give the same tokens.
fn fold_width(text: &str) -> String {
    text.chars()
        .map(|c| match c as u32 {
            0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            0x3000 => ' ',
            _ => c,
        })
        .collect()
}

/// Jieba words of `text`, lower-cased, with stop words and tokens that have no letter or digit
/// (whitespace, punctuation, symbols) removed. Order is kept and repeats are not merged: counts are
/// term frequencies.
pub fn tokenize(text: &str) -> Vec<String> {
    let folded = fold_width(text);
    jieba()
        .cut(&folded, true)
        .into_iter()
        .filter_map(|token| {
            let word = token.word.trim();
            if !word.chars().any(char::is_alphanumeric) {
                return None;
            }
            let word = word.to_lowercase();
            (!is_stop_word(&word)).then_some(word)
        })
        .collect()
}

/// Overlapping two-character windows inside each run of CJK characters ("今天天气" → 今天, 天天,
/// 天气). A run of one character yields nothing; non-CJK text yields nothing.
pub fn cjk_bigrams(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut prev: Option<char> = None;
    for c in fold_width(text).chars() {
        if is_cjk(c) {
            if let Some(p) = prev {
                let mut pair = String::with_capacity(p.len_utf8() + c.len_utf8());
                pair.push(p);
                pair.push(c);
                out.push(pair);
            }
            prev = Some(c);
        } else {
            prev = None;
        }
    }
    out
}
