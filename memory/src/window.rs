//! The working context window (L1): the committed events of the conversation in time order.
//! Events are appended as turns finish and inserted at their original time when recalled.

use crate::ContextEvent;

#[derive(Clone, Debug, Default)]
pub struct ContextWindow {
    events: Vec<ContextEvent>,
}

impl ContextWindow {
    pub fn new() -> Self {
        Self::default()
    }

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

    pub fn events(&self) -> &[ContextEvent] {
        &self.events
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

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
