//! `@modelcontextprotocol/server-filesystem` over stdio: read-only tools marked so, a real file
//! read and written through it, and a write denied by policy never offered.

use std::collections::BTreeSet;

use hearth_mcp::McpServerConfig;
use hearth_mcp::tools::{CAP_READ, CAP_WRITE};
use hearth_stages::{HandlerError, ToolPolicy};
use hearth_testkit::within;
use serde_json::json;

use crate::{LIMIT, Rig, npm_server, plain};

#[test]
fn reads_and_writes_a_real_file_and_a_denied_write_is_withheld() {
    within(LIMIT, || {
        let dir = tempfile::tempdir().expect("a temp dir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::write(root.join("note.txt"), "first line\nsecond line\n").expect("write");
        let rig = Rig::start();
        let cfg = McpServerConfig::stdio(
            "fs",
            "node",
            &[&npm_server("server-filesystem"), &root.to_string_lossy()],
        );
        rig.up(cfg);
        let caps: Vec<(String, String)> = rig
            .tools
            .entries()
            .into_iter()
            .map(|e| (e.name, e.capability))
            .collect();
        assert!(
            caps.contains(&("fs_read_text_file".into(), CAP_READ.into())),
            "{caps:?}"
        );
        assert!(
            caps.contains(&("fs_write_file".into(), CAP_WRITE.into())),
            "{caps:?}"
        );

        let path = root.join("note.txt").to_string_lossy().into_owned();
        let text = rig
            .tools
            .execute(&plain(), "fs_read_text_file", &json!({"path": path}))
            .expect("read");
        assert!(text.to_string().contains("second line"), "{text}");
        let out = root.join("out.txt").to_string_lossy().into_owned();
        rig.tools
            .execute(
                &plain(),
                "fs_write_file",
                &json!({"path": out, "content": "from hearth"}),
            )
            .expect("write");
        assert_eq!(
            std::fs::read_to_string(root.join("out.txt")).expect("written"),
            "from hearth"
        );
        let outside = rig.tools.execute(
            &plain(),
            "fs_read_text_file",
            &json!({"path": "/etc/hostname"}),
        );
        assert!(
            matches!(outside, Err(HandlerError::Failed(_))),
            "{outside:?}"
        );

        rig.tools.set_policy(ToolPolicy {
            denied: BTreeSet::from([CAP_WRITE.to_owned()]),
            ..ToolPolicy::default()
        });
        let offered: Vec<String> = rig.tools.defs().into_iter().map(|d| d.name).collect();
        assert!(
            !offered.contains(&"fs_write_file".to_owned()),
            "{offered:?}"
        );
        assert!(offered.contains(&"fs_read_text_file".to_owned()));
        let denied = rig.tools.execute(
            &plain(),
            "fs_write_file",
            &json!({"path": out, "content": "x"}),
        );
        assert!(matches!(denied, Err(HandlerError::Denied(_))), "{denied:?}");
        assert_eq!(
            std::fs::read_to_string(root.join("out.txt")).expect("kept"),
            "from hearth"
        );
    });
}
