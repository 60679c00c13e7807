//! How a person names a remembered turn to take it back: `c45`, a cold entry, or `w12`, a turn
//! still in the working window. Either way its whole turn goes (`memory_forget`).

use crate::recalled::ENTRY_PREFIX;

/// How a turn still in the working window is written (`w12`, its window row), beside a
/// remembered entry's `c45`.
pub const WINDOW_PREFIX: &str = "w";

/// A remembered exchange a user may take back: a cold entry, or a window event not yet moved
/// to cold context. Either way its whole turn goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryRef {
    /// A cold entry (`c45`).
    Cold(i64),
    /// A window event (`w12`).
    Window(i64),
}

impl EntryRef {
    /// `c45` or `w12`; `None` for anything else (a fact's `r12`, a typo).
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let number = |rest: &str| rest.parse::<i64>().ok().filter(|n| *n > 0);
        if let Some(rest) = text.strip_prefix(ENTRY_PREFIX) {
            number(rest).map(Self::Cold)
        } else {
            number(text.strip_prefix(WINDOW_PREFIX)?).map(Self::Window)
        }
    }
}

impl std::fmt::Display for EntryRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Cold(id) => write!(f, "{ENTRY_PREFIX}{id}"),
            Self::Window(id) => write!(f, "{WINDOW_PREFIX}{id}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::EntryRef;

    #[test]
    fn an_entry_is_named_by_c_or_w_and_a_number() {
        assert_eq!(EntryRef::parse("c45"), Some(EntryRef::Cold(45)));
        assert_eq!(EntryRef::parse(" w12 "), Some(EntryRef::Window(12)));
        for bad in ["r12", "e3", "c", "w", "c-1", "w0", "c4x", "45", "", "wc1"] {
            assert_eq!(EntryRef::parse(bad), None, "{bad}");
        }
        for entry in [EntryRef::Cold(7), EntryRef::Window(9)] {
            assert_eq!(EntryRef::parse(&entry.to_string()), Some(entry));
        }
    }
}
