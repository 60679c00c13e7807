//! How much of each turn's prompt the one before already held: what a local model's server
//! (llama.cpp's prompt cache, Ollama's) can reuse instead of reading again, turn after turn.
//!
//! A prompt is the fixed system part, then what memory adds and the working window as a
//! timeline, then the input. A server reuses the longest prefix a request shares with the
//! previous one; everything after the first difference is read again, and on a small home
//! machine reading a prompt costs seconds per thousand tokens. Two places for the memory block
//! are compared: right after the system prompt (`first`), where a change of its members makes
//! the whole timeline after it be read again, and right before the input (`last`), where only
//! the block and what follows are.

/// One turn's prompt, as far as reuse goes: the recalled block's members and size, and the
/// window's events with their sizes, in timeline order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PromptShape {
    /// The ids of the block's members, in the block's order.
    pub block: Vec<String>,
    /// The block's tokens.
    pub block_tokens: usize,
    /// The window's events: (window row id, tokens), oldest first.
    pub window: Vec<(i64, usize)>,
}

impl PromptShape {
    /// Tokens of the block and the timeline.
    pub fn tokens(&self) -> usize {
        self.block_tokens + self.window.iter().map(|e| e.1).sum::<usize>()
    }

    /// Tokens of the timeline's leading events `previous` also began with, in order.
    fn shared_timeline(&self, previous: &PromptShape) -> usize {
        self.window
            .iter()
            .zip(&previous.window)
            .take_while(|(a, b)| a.0 == b.0)
            .map(|(a, _)| a.1)
            .sum()
    }

    /// Tokens a server reuses from `previous` with the block right after the system prompt.
    pub fn reused_block_first(&self, previous: &PromptShape) -> usize {
        if self.block != previous.block {
            return 0;
        }
        self.block_tokens + self.shared_timeline(previous)
    }

    /// Tokens a server reuses from `previous` with the block right before the input: the
    /// timeline's shared start (the block follows the whole timeline, and the timeline
    /// always gained the previous turn, so the block is read again).
    pub fn reused_block_last(&self, previous: &PromptShape) -> usize {
        self.shared_timeline(previous)
    }
}

/// Reuse over a replay, per placement of the block.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReuseStats {
    /// Turns measured (each with a turn before it).
    pub turns: usize,
    /// Tokens of block and timeline over those turns.
    pub tokens: usize,
    /// Of them, reused with the block first.
    pub reused_first: usize,
    /// Of them, reused with the block last.
    pub reused_last: usize,
    /// Tokens read again per turn, block first (every turn's count, for the percentiles).
    pub read_first: Vec<usize>,
    /// Tokens read again per turn, block last.
    pub read_last: Vec<usize>,
}

impl ReuseStats {
    /// Counts turn `now` after `previous`.
    pub fn add(&mut self, now: &PromptShape, previous: &PromptShape) {
        let total = now.tokens();
        let (first, last) = (
            now.reused_block_first(previous),
            now.reused_block_last(previous),
        );
        self.turns += 1;
        self.tokens += total;
        self.reused_first += first;
        self.reused_last += last;
        self.read_first.push(total - first);
        self.read_last.push(total - last);
    }

    /// The share reused, block first and block last.
    pub fn shares(&self) -> (f64, f64) {
        let t = self.tokens.max(1) as f64;
        (self.reused_first as f64 / t, self.reused_last as f64 / t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(block: &[&str], window: &[(i64, usize)]) -> PromptShape {
        PromptShape {
            block: block.iter().map(|s| s.to_string()).collect(),
            block_tokens: 10 * block.len(),
            window: window.to_vec(),
        }
    }

    #[test]
    fn a_changed_block_first_makes_the_whole_timeline_be_read_again() {
        let before = shape(&["a"], &[(1, 100), (2, 50)]);
        let appended = shape(&["a"], &[(1, 100), (2, 50), (3, 40)]);
        assert_eq!(appended.reused_block_first(&before), 160);
        assert_eq!(appended.reused_block_last(&before), 150);
        let new_block = shape(&["b"], &[(1, 100), (2, 50), (3, 40)]);
        assert_eq!(new_block.reused_block_first(&before), 0);
        assert_eq!(new_block.reused_block_last(&before), 150);
        // An event pruned from the middle: the timeline is shared up to it.
        let pruned = shape(&["a"], &[(1, 100), (3, 40), (4, 40)]);
        assert_eq!(pruned.reused_block_first(&before), 110);
        assert_eq!(pruned.reused_block_last(&before), 100);
        let mut stats = ReuseStats::default();
        stats.add(&pruned, &before);
        assert_eq!(stats.read_first, [190 - 110]);
        assert_eq!(stats.read_last, [190 - 100]);
    }
}
