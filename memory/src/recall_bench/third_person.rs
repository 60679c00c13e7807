//! English questions asked in the first and second person ("what did I buy", "the hotel you
//! recommended") rewritten to name the two people of the conversation instead ("what did Ana
//! buy", "the hotel Ben recommended"), as a household member or a benchmark about other people's
//! conversations asks them. Word by word on whole words only; the grammar around a replaced
//! pronoun is mended where a question usually needs it ("am I" → "is Ana", "do I" → "does Ana"),
//! and left as it is elsewhere: retrieval reads words, not agreement.

/// The replacement of one whole word, matched case-insensitively (its first letter's case is
/// kept where the replacement is a pronoun, and a name is always capitalised).
fn replace_word(word: &str, user: &str, partner: &str) -> Option<String> {
    let lower = word.to_ascii_lowercase();
    let named = match lower.as_str() {
        "i" | "me" => user.to_owned(),
        "i'm" => format!("{user} is"),
        "i've" => format!("{user} has"),
        "i'd" => format!("{user} would"),
        "i'll" => format!("{user} will"),
        "my" | "mine" => format!("{user}'s"),
        "myself" => format!("{user} herself"),
        "you" => partner.to_owned(),
        "you're" => format!("{partner} is"),
        "you've" => format!("{partner} has"),
        "you'd" => format!("{partner} would"),
        "you'll" => format!("{partner} will"),
        "your" | "yours" => format!("{partner}'s"),
        "yourself" => format!("{partner} himself"),
        "we" | "us" => format!("{user} and {partner}"),
        "we're" => format!("{user} and {partner} are"),
        "we've" => format!("{user} and {partner} have"),
        "our" | "ours" => format!("{user} and {partner}'s"),
        _ => return None,
    };
    Some(named)
}

/// `question` with its first- and second-person words replaced by `user` and `partner`.
pub(crate) fn third_person(question: &str, user: &str, partner: &str) -> String {
    let mut out = String::with_capacity(question.len() + 16);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        match replace_word(word, user, partner) {
            Some(named) => {
                // "am I" / "do I" / "have I": the verb before a replaced "I" agrees with a name.
                let lower = word.to_ascii_lowercase();
                if lower == "i" {
                    mend_verb_before(out);
                }
                out.push_str(&named);
            }
            None => out.push_str(word),
        }
        word.clear();
    };
    // Apostrophes belong to the word ("I'm", "you've", "Ana's"); everything else that is not
    // alphanumeric ends it.
    for c in question.chars() {
        if c.is_alphanumeric() || c == '\'' || c == '’' {
            word.push(if c == '’' { '\'' } else { c });
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Rewrites the verb just before the end of `out` (followed by one space) when it is one a
/// first-person subject inverts: "am" → "is", "do" → "does", "have" → "has".
fn mend_verb_before(out: &mut String) {
    let Some(body) = out.strip_suffix(' ') else {
        return;
    };
    let start = body
        .rfind(|c: char| !c.is_alphanumeric())
        .map_or(0, |i| i + 1);
    let verb = &body[start..];
    let mended = match verb.to_ascii_lowercase().as_str() {
        "am" => "is",
        "do" => "does",
        "have" => "has",
        _ => return,
    };
    let capital = verb.starts_with(|c: char| c.is_ascii_uppercase());
    let mut mended = mended.to_owned();
    if capital {
        mended[..1].make_ascii_uppercase();
    }
    out.replace_range(start..body.len(), &mended);
}

#[cfg(test)]
mod tests {
    use super::third_person;

    #[test]
    fn first_and_second_person_become_the_two_names() {
        let q = |s: &str| third_person(s, "Ana", "Ben");
        assert_eq!(
            q("What was the first issue I had with my new car?"),
            "What was the first issue Ana had with Ana's new car?"
        );
        assert_eq!(
            q("How many fish do I have in total?"),
            "How many fish does Ana have in total?"
        );
        assert_eq!(
            q("Can you remind me of the video you recommended in our previous chat?"),
            "Can Ben remind Ana of the video Ben recommended in Ana and Ben's previous chat?"
        );
        assert_eq!(
            q("I'm going back to what you’ve told me."),
            "Ana is going back to what Ben has told Ana."
        );
        assert_eq!(q("Am I late?"), "Is Ana late?");
        // Words that merely contain a pronoun are left alone.
        assert_eq!(q("Idaho is mine"), "Idaho is Ana's");
        assert_eq!(q("Myriad items, Iowa"), "Myriad items, Iowa");
        assert_eq!(q("火锅 I like"), "火锅 Ana like");
    }
}
