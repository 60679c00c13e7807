//! The working context window (L1): the committed events of the conversation in time order.
//! Events are appended as turns finish and inserted at their original time when recalled.

use crate::ContextEvent;

/// The window's events in memory, oldest first.
#[derive(Clone, Debug, Default)]
pub struct ContextWindow {
    events: Vec<ContextEvent>,
}

impl ContextWindow {
    /// An empty window.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `event` as the newest, whatever its timestamp.
    pub fn append(&mut self, event: ContextEvent) {
        self.events.push(event);
    }

    /// Inserts after every event that is not later than `event`, keeping time order.
    pub fn insert_by_timestamp(&mut self, event: ContextEvent) {
        let at = self
            .events
            .partition_point(|e| e.timestamp_ms <= event.timestamp_ms);
        self.events.insert(at, event);
    }

    /// Every event, oldest first.
    pub fn events(&self) -> &[ContextEvent] {
        &self.events
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether the window holds no event.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The newest `n` events (all of them when there are fewer), oldest first.
    pub fn recent(&self, n: usize) -> &[ContextEvent] {
        &self.events[self.events.len().saturating_sub(n)..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_by_timestamp_keeps_order_and_ties_after() {
        let mut w = ContextWindow::new();
        w.append(ContextEvent::new(10, "a", "1"));
        w.append(ContextEvent::new(30, "a", "3"));
        w.insert_by_timestamp(ContextEvent::new(20, "a", "2"));
        w.insert_by_timestamp(ContextEvent::new(30, "b", "3b"));
        let inputs: Vec<_> = w.events().iter().map(|e| e.input.as_str()).collect();
        assert_eq!(inputs, ["1", "2", "3", "3b"]);
        assert_eq!(w.recent(2).len(), 2);
        assert_eq!(w.recent(9).len(), 4);
    }
}
