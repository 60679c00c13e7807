//! A caller that hangs up: when the client an input came from closes its connection and
//! nothing else waits for the answer, the task's LLM call is cut (the provider sees its
//! connection close) and the task ends journaled as `cancelled`, so it is not run again after
//! a restart. An input resumed from the journal has no caller and is never abandoned.

use super::{TurnEngine, Wait};
use std::collections::VecDeque;

/// Abandoned inputs not running yet (queued or suspended): taken when they start. Bounded,
/// because an abandonment can cross its own reply (the task ended as the client left) and
/// leave an id nobody will take.
#[derive(Debug, Default)]
pub(super) struct Abandoned {
    ids: VecDeque<String>,
}

/// Abandoned ids kept for inputs not running yet; the ready queue holds no more inputs.
const ABANDONED_KEPT: usize = hearth_scheduler::DEFAULT_MAX_QUEUE;

impl Abandoned {
    fn remember(&mut self, request_id: &str) {
        if self.ids.len() == ABANDONED_KEPT {
            self.ids.pop_front();
        }
        self.ids.push_back(request_id.to_string());
    }

    /// Whether `request_id` was abandoned; forgets it.
    pub(super) fn take(&mut self, request_id: &str) -> bool {
        match self.ids.iter().position(|id| id == request_id) {
            Some(pos) => {
                self.ids.remove(pos);
                true
            }
            None => false,
        }
    }
}

impl TurnEngine {
    /// The only caller of `request_id` is gone. A running task has its LLM call cut and ends
    /// as `cancelled` at its next safe point; one not running yet ends so when it starts. A
    /// task past its terminal (its reply is on the way) is left to finish.
    pub fn abandon(&mut self, request_id: &str) {
        let Some(cur) = self
            .current
            .as_mut()
            .filter(|c| c.task.input.request_id == request_id)
        else {
            self.abandoned.remember(request_id);
            return;
        };
        if !cur.task.input.has_reply() || cur.finishing() || cur.frame.terminal.is_some() {
            return;
        }
        tracing::debug!(request = request_id, "caller hung up; cancelling its task");
        cur.abandoned = true;
        if let Wait::Llm { cancel, .. } = &cur.wait {
            cancel.cancel();
        }
        cur.cancel.cancel();
    }
}
