//! Suspended scheduler frames come back in stack order across a restart, so preempted tasks
//! resume in the order they were stacked.

use serde_json::json;

use super::test_support::{TempDir, watchdog};
use super::*;

#[test]
fn store_frames_load_in_stack_order() {
    watchdog(|| {
        let dir = TempDir::new("frames");
        let mut store = Store::open(dir.db()).expect("open");
        let frame = |task_id, pos| FrameRecord {
            task_id,
            request_id: format!("req-{task_id}"),
            level: 2,
            preempt_count: 1,
            frame: json!({"step": "llm", "task": task_id}),
            stack_pos: pos,
        };
        store.frames_save(&frame(7, 2), 1).expect("save");
        store.frames_save(&frame(3, 0), 1).expect("save");
        store.frames_save(&frame(5, 1), 1).expect("save");
        let order: Vec<u64> = store
            .frames_load()
            .expect("load")
            .iter()
            .map(|f| f.task_id)
            .collect();
        assert_eq!(order, [3, 5, 7]);

        let mut moved = frame(7, 0);
        moved.preempt_count = u32::MAX;
        moved.level = u8::MAX;
        store.frames_save(&moved, 2).expect("replace");
        let loaded = store.frames_load().expect("load");
        assert_eq!(loaded.len(), 3);
        assert_eq!(
            loaded[1], moved,
            "task 7 replaced, now at the bottom (tie by id)"
        );

        assert!(store.frames_remove(3).expect("remove"));
        assert!(!store.frames_remove(3).expect("remove"));
        assert!(!store.frames_remove(u64::MAX).expect("remove"));
        let err = store
            .frames_save(&frame(u64::MAX, 0), 1)
            .expect_err("too large");
        assert!(matches!(err, StoreError::Data { .. }), "{err}");
        drop(store);
        let reopened = Store::open(dir.db()).expect("reopen");
        let ids: Vec<u64> = reopened
            .frames_load()
            .expect("load")
            .iter()
            .map(|f| f.task_id)
            .collect();
        assert_eq!(ids, [7, 5]);
    });
}
