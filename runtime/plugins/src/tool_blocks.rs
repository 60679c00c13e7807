//! `io.setToolBlocks` (the original's `SetToolBlocks`): media a plugin's tool hands the kernel
//! beside its result, from inside the tool's call. Each `tool.invoke` carries a call id in its
//! `ctx`, which the SDK copies into the reverse calls the handler makes; the blocks set under
//! that id join the tool's result as content blocks when the tool answers, and from there take
//! the path of any tool's media (stored, marked, shown to a source that sees). Blocks set for
//! a call that failed are dropped with it; a call id that is not a running tool call of this
//! plugin is refused, so no media can be slipped into another call's result.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use serde_json::{Value, json};

/// The running tool calls of one plugin and the blocks each was given.
#[derive(Debug, Default)]
pub(crate) struct ToolBlocks {
    calls: Mutex<HashMap<String, Vec<Value>>>,
    next: AtomicU64,
}

/// One running tool call's entry; dropped with the call, whatever its end.
pub(crate) struct OpenCall<'a> {
    table: &'a ToolBlocks,
    id: String,
}

impl ToolBlocks {
    /// A new call's entry and its id.
    pub(crate) fn open(&self) -> OpenCall<'_> {
        let id = format!("call-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        self.calls.lock().insert(id.clone(), Vec::new());
        OpenCall { table: self, id }
    }

    /// Sets the blocks of running call `call_id` (replacing any set before); false when no
    /// such call is running.
    pub(crate) fn set(&self, call_id: &str, blocks: Vec<Value>) -> bool {
        match self.calls.lock().get_mut(call_id) {
            Some(slot) => {
                *slot = blocks;
                true
            }
            None => false,
        }
    }

    /// Whether `call_id` is a tool call of this plugin that has not answered yet.
    pub(crate) fn running(&self, call_id: &str) -> bool {
        self.calls.lock().contains_key(call_id)
    }
}

impl OpenCall<'_> {
    /// The id the call's `ctx` carries.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The blocks set for the call (none: empty), closing its entry.
    pub(crate) fn take(self) -> Vec<Value> {
        self.table.calls.lock().remove(&self.id).unwrap_or_default()
    }
}

impl Drop for OpenCall<'_> {
    fn drop(&mut self) {
        self.table.calls.lock().remove(&self.id);
    }
}

/// A tool's result with `blocks` after it, as content blocks: a result that is a list of
/// content blocks (or an object whose `content` is one) gets them appended; text stays text,
/// any other value becomes its JSON text, and no result leaves the blocks alone.
pub(crate) fn with_blocks(result: Value, blocks: Vec<Value>) -> Value {
    if blocks.is_empty() {
        return result;
    }
    let is_block = |b: &Value| b.get("type").is_some_and(Value::is_string);
    let mut result = result;
    match &mut result {
        Value::Array(items) if items.iter().all(is_block) => {
            items.extend(blocks);
            return result;
        }
        Value::Object(map) => {
            if let Some(Value::Array(items)) = map.get_mut("content")
                && items.iter().all(is_block)
            {
                items.extend(blocks);
                return result;
            }
        }
        _ => {}
    }
    let text = match result {
        Value::Null => None,
        Value::String(s) => Some(s),
        other => Some(other.to_string()),
    };
    text.map(|t| json!({"type": "text", "text": t}))
        .into_iter()
        .chain(blocks)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image() -> Value {
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}})
    }

    #[test]
    fn blocks_join_every_shape_of_result() {
        let text = |t: &str| json!({"type": "text", "text": t});
        assert_eq!(
            with_blocks(json!("a photo"), vec![image()]),
            json!([text("a photo"), image()])
        );
        assert_eq!(
            with_blocks(json!({"taken": true}), vec![image()]),
            json!([text(r#"{"taken":true}"#), image()])
        );
        assert_eq!(with_blocks(Value::Null, vec![image()]), json!([image()]));
        assert_eq!(
            with_blocks(json!([text("two")]), vec![image()]),
            json!([text("two"), image()])
        );
        assert_eq!(
            with_blocks(json!([1, 2]), vec![image()]),
            json!([text("[1,2]"), image()]),
            "a list of values is not a list of blocks"
        );
        assert_eq!(
            with_blocks(
                json!({"content": [text("c")], "isError": false}),
                vec![image()]
            ),
            json!({"content": [text("c"), image()], "isError": false})
        );
        assert_eq!(with_blocks(json!("plain"), Vec::new()), json!("plain"));
    }

    #[test]
    fn blocks_are_taken_only_by_a_running_call_and_go_with_it() {
        let table = ToolBlocks::default();
        let first = table.open();
        let id = first.id().to_owned();
        assert!(table.set(&id, vec![json!({"type": "text", "text": "x"})]));
        assert!(table.set(&id, vec![image()]), "set again: replaced");
        assert_eq!(first.take(), vec![image()]);
        assert!(!table.set(&id, vec![image()]), "the call has ended");

        let failed = table.open();
        let id = failed.id().to_owned();
        assert!(table.set(&id, vec![image()]));
        drop(failed);
        assert!(table.calls.lock().is_empty(), "dropped with its call");
        assert!(!table.set("call-99", vec![image()]));
        assert_ne!(table.open().id(), id, "ids are not reused");
    }
}
