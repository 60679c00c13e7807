//! The four per-level interrupt FIFOs (SPEC §2.3).

use std::collections::VecDeque;

use super::level::Level;
use super::task::Task;

/// One FIFO per level. Everything in here is a task that has not started yet, so its effective
/// level equals its base level.
pub(crate) struct InterruptQueues<I> {
    by_level: [VecDeque<Task<I>>; 4],
}

impl<I> InterruptQueues<I> {
    pub(crate) fn new() -> Self {
        InterruptQueues {
            by_level: std::array::from_fn(|_| VecDeque::new()),
        }
    }

    fn queue(&self, level: Level) -> &VecDeque<Task<I>> {
        &self.by_level[level.index() - 1]
    }

    fn queue_mut(&mut self, level: Level) -> &mut VecDeque<Task<I>> {
        &mut self.by_level[level.index() - 1]
    }

    pub(crate) fn push(&mut self, task: Task<I>) {
        self.queue_mut(task.level).push_back(task);
    }

    pub(crate) fn len(&self) -> usize {
        self.by_level.iter().map(VecDeque::len).sum()
    }

    /// The head of the highest non-empty level, scanning L4 down to L1, with that level.
    pub(crate) fn highest_head(&self) -> Option<(&Task<I>, Level)> {
        Level::ALL
            .iter()
            .rev()
            .find_map(|&l| self.queue(l).front().map(|t| (t, l)))
    }

    pub(crate) fn pop(&mut self, level: Level) -> Option<Task<I>> {
        self.queue_mut(level).pop_front()
    }

    /// Pops the first head, scanning L4 down to L1, that satisfies `pred`. Because queued
    /// interrupts are unpromoted, the first match is the highest level that qualifies.
    pub(crate) fn pop_first_head(&mut self, pred: impl Fn(&Task<I>) -> bool) -> Option<Task<I>> {
        let level = Level::ALL
            .iter()
            .rev()
            .copied()
            .find(|&l| self.queue(l).front().is_some_and(&pred))?;
        self.pop(level)
    }

    /// The overflow victim: the oldest entry of the lowest non-empty level, scanning L1 upward.
    /// Interrupts are advisory, so the least urgent, longest-waiting one goes first.
    pub(crate) fn evict_oldest_lowest(&mut self) -> Option<Task<I>> {
        self.by_level.iter_mut().find_map(VecDeque::pop_front)
    }

    /// Each level's queue, L1 first, heads first.
    pub(crate) fn levels(&self) -> impl Iterator<Item = (Level, &VecDeque<Task<I>>)> {
        Level::ALL.into_iter().map(|l| (l, self.queue(l)))
    }

    /// Empties every queue, highest level first, heads first.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = Task<I>> + '_ {
        self.by_level.iter_mut().rev().flat_map(|q| q.drain(..))
    }
}
