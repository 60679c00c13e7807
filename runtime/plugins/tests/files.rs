//! The bundled `files` plugin as a process under the host: reads, lists, searches and writes
//! inside its allowed directories; `..`, absolute paths outside, symlinks pointing out (even
//! one swapped in while reads run) are refused; large reads go through the exchange arena.

mod support;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hearth_ipc::SegmentConfig;
use hearth_plugin_host::{DataPlane, PluginHost, PluginState};
use serde_json::{Value, json};
use support::{CallTool, Fixture, LONG, sdk_binary, watchdog};

struct Tree {
    _dir: tempfile::TempDir,
    allowed: std::path::PathBuf,
    writable: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().expect("dir");
    let base = dir.path().canonicalize().expect("canonical");
    let (allowed, writable, outside) =
        (base.join("allowed"), base.join("out"), base.join("secret"));
    for d in [&allowed, &writable, &outside, &allowed.join("notes")] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(
        allowed.join("notes/tea.txt"),
        "green tea\nblack Tea at five\n",
    )
    .unwrap();
    std::fs::write(allowed.join("readme.md"), "hello\n").unwrap();
    std::fs::write(outside.join("key.txt"), "SECRET").unwrap();
    Tree {
        _dir: dir,
        allowed,
        writable,
        outside,
    }
}

fn start(fx: &Fixture, t: &Tree, data: Option<&Arc<DataPlane>>) -> Arc<PluginHost> {
    fx.install(
        "files",
        &sdk_binary("hearth-files"),
        r#","capabilities":["events"]"#,
    );
    let config = json!({"roots": [t.allowed, {"path": t.writable, "write": true}]});
    let host = fx.host_cfg(|cfg| {
        cfg.configs.insert("files".into(), config);
        cfg.data_plane = data.cloned();
    });
    host.start_all().expect("order");
    let s = host
        .wait_for("files", LONG, |s| s.state == PluginState::Running)
        .expect("slot");
    assert_eq!(s.state, PluginState::Running, "{s:?}");
    host
}

fn call(fx: &Fixture, tool: &str, args: Value) -> Result<Value, String> {
    fx.tables.tools.call_tool(tool, &args)
}

fn refused(fx: &Fixture, tool: &str, args: Value, why: &str) {
    let err = call(fx, tool, args.clone()).expect_err("refused");
    assert!(err.contains(why), "{tool} {args}: {err}");
    // A path the plugin may not touch is a denial, not a failure of the operation.
    assert!(err.starts_with("denied: "), "{tool} {args}: {err}");
    assert!(!err.contains("SECRET"), "{err}");
}

#[test]
fn reads_lists_searches_and_writes_inside_the_allowed_directories() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let t = tree();
        let host = start(&fx, &t, None);
        let got = call(&fx, "files_read", json!({"path": "notes/tea.txt"})).expect("read");
        assert_eq!(got["content"], "green tea\nblack Tea at five\n");
        assert_eq!(got["eof"], true);
        let abs = t.allowed.join("readme.md");
        assert_eq!(
            call(&fx, "files_read", json!({"path": abs})).unwrap()["content"],
            "hello\n"
        );
        // A window that does not reach the end says where to go on.
        let got = call(
            &fx,
            "files_read",
            json!({"path": "notes/tea.txt", "offset": 6, "length": 4}),
        )
        .unwrap();
        assert_eq!(got["content"], "tea\n");
        assert_eq!(
            (got["eof"].clone(), got["next_offset"].clone()),
            (json!(false), json!(10))
        );

        let listed = call(&fx, "files_list", json!({})).expect("list");
        let names: Vec<&str> = listed["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["notes", "readme.md"]);
        assert_eq!(listed["entries"][0]["kind"], "dir");

        let found = call(&fx, "files_search", json!({"query": "TEA"})).expect("search");
        let lines: Vec<u64> = found["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["line"].as_u64().unwrap())
            .collect();
        assert_eq!(lines, [0, 1, 2], "the name and both lines: {found}");

        let target = t.writable.join("log.txt");
        call(
            &fx,
            "files_write",
            json!({"path": target, "content": "one\n"}),
        )
        .expect("write");
        call(
            &fx,
            "files_write",
            json!({"path": target, "content": "two\n", "append": true}),
        )
        .expect("append");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "one\ntwo\n");
        // The first root is read-only.
        refused(
            &fx,
            "files_write",
            json!({"path": "readme.md", "content": "x"}),
            "read-only",
        );
        assert_eq!(
            std::fs::read_to_string(t.allowed.join("readme.md")).unwrap(),
            "hello\n"
        );
        host.shutdown();
    });
}

#[test]
fn traversal_absolute_paths_and_symlinks_pointing_out_are_refused() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let t = tree();
        symlink(&t.outside, t.allowed.join("escape")).unwrap();
        symlink(t.outside.join("key.txt"), t.allowed.join("key-link")).unwrap();
        symlink("../secret/key.txt", t.allowed.join("relative-link")).unwrap();
        symlink(t.outside.join("key.txt"), t.writable.join("planted")).unwrap();
        // A symlink that stays inside is fine.
        symlink("notes/tea.txt", t.allowed.join("inside-link")).unwrap();
        let host = start(&fx, &t, None);
        for path in ["../secret/key.txt", "notes/../../secret/key.txt"] {
            refused(&fx, "files_read", json!({"path": path}), "path traversal");
        }
        refused(
            &fx,
            "files_read",
            json!({"path": t.outside.join("key.txt")}),
            "outside the allowed directories",
        );
        refused(
            &fx,
            "files_read",
            json!({"path": "/etc/passwd"}),
            "outside the allowed directories",
        );
        for path in ["escape/key.txt", "key-link", "relative-link"] {
            refused(
                &fx,
                "files_read",
                json!({"path": path}),
                "leads outside the allowed directory",
            );
        }
        refused(
            &fx,
            "files_list",
            json!({"path": "escape"}),
            "leads outside",
        );
        // Writing through a planted symlink is refused and the target is untouched.
        refused(
            &fx,
            "files_write",
            json!({"path": t.writable.join("planted"), "content": "pwned"}),
            "refused",
        );
        assert_eq!(
            std::fs::read_to_string(t.outside.join("key.txt")).unwrap(),
            "SECRET"
        );
        // Search never follows a symlink, so it finds nothing outside.
        let found = call(&fx, "files_search", json!({"query": "secret"})).expect("search");
        assert_eq!(found["hits"], json!([]), "{found}");
        assert_eq!(
            call(&fx, "files_read", json!({"path": "inside-link"})).unwrap()["content"],
            "green tea\nblack Tea at five\n"
        );
        host.shutdown();
    });
}

#[test]
fn a_symlink_swapped_while_reads_run_never_yields_the_outside_file() {
    watchdog(Duration::from_secs(90), || {
        let fx = Fixture::new();
        let t = tree();
        let link = t.allowed.join("flip");
        symlink("notes/tea.txt", &link).unwrap();
        let host = start(&fx, &t, None);
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (stop, link, inside, outside) = (
                Arc::clone(&stop),
                link.clone(),
                Path::new("notes/tea.txt").to_owned(),
                t.outside.join("key.txt"),
            );
            std::thread::spawn(move || {
                let tmp = link.with_extension("tmp");
                let mut flips = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let to = if flips.is_multiple_of(2) {
                        outside.as_path()
                    } else {
                        inside.as_path()
                    };
                    let _ = std::fs::remove_file(&tmp);
                    symlink(to, &tmp).unwrap();
                    std::fs::rename(&tmp, &link).unwrap();
                    flips += 1;
                }
                flips
            })
        };
        let (mut inside, mut refusals) = (0, 0);
        for _ in 0..300 {
            match call(&fx, "files_read", json!({"path": "flip"})) {
                Ok(v) => {
                    assert_eq!(
                        v["content"], "green tea\nblack Tea at five\n",
                        "read the outside file"
                    );
                    inside += 1;
                }
                Err(e) => {
                    assert!(!e.contains("SECRET"), "{e}");
                    refusals += 1;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        let flips = swapper.join().expect("swapper");
        assert!(flips > 100, "the link kept flipping ({flips})");
        assert!(
            refusals > 0,
            "some reads met the outside target and were refused"
        );
        assert!(inside + refusals == 300);
        host.shutdown();
    });
}

#[test]
fn a_large_read_goes_through_the_exchange_arena() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let t = tree();
        let big = "0123456789abcdef".repeat(128 * 1024); // 2 MiB
        std::fs::write(t.allowed.join("big.txt"), &big).unwrap();
        let plane = DataPlane::create(SegmentConfig::default()).expect("segment");
        let free = plane.free_blocks();
        let host = start(&fx, &t, Some(&plane));
        let got = call(&fx, "files_read", json!({"path": "big.txt"})).expect("2 MiB read");
        assert_eq!(got["content"].as_str().map(str::len), Some(big.len()));
        assert!(got["content"] == big.as_str());
        assert_eq!(plane.free_blocks(), free, "the result's block was freed");
        host.shutdown();
    });
}

#[test]
fn a_bad_config_is_a_clear_start_error() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        fx.install(
            "files",
            &sdk_binary("hearth-files"),
            r#","capabilities":["events"]"#,
        );
        let host = fx.host_cfg(|cfg| {
            cfg.configs
                .insert("files".into(), json!({"roots": ["/no/such/dir"]}));
        });
        host.start_all().expect("order");
        let s = host
            .wait_for("files", LONG, |s| s.state == PluginState::Failed)
            .expect("slot");
        assert_eq!(s.state, PluginState::Failed);
        let why = s.last_error.unwrap_or_default();
        assert!(why.contains("/no/such/dir"), "{why}");
    });
}

#[test]
fn without_config_the_roots_come_from_the_settings_registry() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let t = tree();
        let settings = Arc::new(hearth_settings::Settings::open(fx.data.path()).expect("settings"));
        fx.install(
            "files",
            &sdk_binary("hearth-files"),
            r#","capabilities":["events"]"#,
        );
        let host = fx.host_cfg(|cfg| cfg.settings = Some(Arc::clone(&settings)));
        host.start_all().expect("order");
        let s = host
            .wait_for("files", LONG, |s| s.state != PluginState::Starting)
            .expect("slot");
        assert_eq!(s.state, PluginState::Failed, "no roots anywhere: {s:?}");
        assert!(
            s.last_error
                .unwrap_or_default()
                .contains("plugin.files.roots")
        );

        settings
            .set("plugin.files.roots", json!([t.allowed]))
            .unwrap();
        host.reload("files").expect("reload");
        let s = host
            .wait_for("files", LONG, |s| s.state == PluginState::Running)
            .expect("slot");
        assert_eq!(s.state, PluginState::Running, "{s:?}");
        let got = call(&fx, "files_read", json!({"path": "readme.md"})).expect("read");
        assert_eq!(got["content"], "hello\n");
        host.shutdown();
    });
}
