//! Media sent with an input: stored in the media store before the input is acknowledged,
//! journaled by digest (never as base64), shown to the model and kept in the working window as
//! a marker line the kernel writes; an item that cannot be stored refuses the input whole.

use crate::harness::{Daemon, source, stderr, tool_turn, within};
use crate::raw::Raw;
use hearth_memory::StoreReader;
use hearth_testkit::llm_server::LlmServer;
use serde_json::json;
use std::time::Duration;

/// Bytes that stand for an image: the store does not look inside.
const PICTURE: &[u8] = b"\x89PNG\r\n\x1a\n a picture of a red bicycle";

#[test]
fn an_attached_picture_is_stored_journaled_by_digest_and_marked_for_the_model() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&format!(
            "memory_model = false\n{}",
            source("remote", &server.base_url, 0)
        ));
        let file = daemon.dir.join("bike.png");
        std::fs::write(&file, PICTURE).expect("write the picture");
        // A photo's size, over the 1 MiB a request line had before media.
        let photo = daemon.dir.join("photo.jpg");
        let photo_bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&photo, &photo_bytes).expect("write the photo");
        let out = daemon.run(&[
            "send",
            "--attach",
            file.to_str().expect("utf-8 path"),
            "--attach",
            photo.to_str().expect("utf-8 path"),
            "what do you see?",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));

        let digest = hearth_media::digest_of(PICTURE);
        let media = hearth_media::MediaStore::open(daemon.dir.join("media")).expect("media store");
        assert_eq!(media.get(&digest).expect("stored"), PICTURE);
        let photo_digest = hearth_media::digest_of(&photo_bytes);
        assert_eq!(media.get(&photo_digest).expect("stored"), photo_bytes);
        assert_eq!(media.meta(&photo_digest).expect("meta").mime, "image/jpeg");
        assert_eq!(media.meta(&digest).expect("meta").mime, "image/png");

        // The model saw the text and the kernel's marker, not the bytes.
        let seen = server.wait_requests(1, Duration::from_secs(10));
        let asked = seen.last().expect("a request").body["messages"].to_string();
        let marker = format!(
            "[image image/png, {} B, sha256:{}]",
            PICTURE.len(),
            &digest[..12]
        );
        assert!(asked.contains("what do you see?"), "{asked}");
        assert!(asked.contains(&marker), "{marker} missing from {asked}");
        assert!(!asked.contains("base64"), "{asked}");

        // The journal holds the digest, the window the marked input.
        let store = StoreReader::open(daemon.dir.join("memory.db")).expect("store");
        let window = store.events_window().expect("window");
        assert!(
            window
                .iter()
                .any(|e| e.record.event.input.contains(&marker)),
            "{window:?}"
        );
        let journaled = store.journal_pending().expect("pending");
        assert!(journaled.is_empty(), "answered");
        let id = &window
            .iter()
            .find(|e| e.record.event.input.contains(&marker))
            .expect("the input")
            .record
            .event
            .id;
        let entry = store.journal_get(id).expect("read").expect("journaled");
        assert_eq!(entry.payload["media_blocks"][0]["digest"], digest.as_str());
        assert!(
            !entry.payload.to_string().contains("base64"),
            "{}",
            entry.payload
        );

        // The item comes back by the name its marker shows, byte for byte.
        let back = daemon.dir.join("back.jpg");
        let out = daemon.run(&[
            "memory",
            "media",
            &photo_digest[..12],
            "--output",
            back.to_str().expect("path"),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(std::fs::read(&back).expect("written"), photo_bytes);
        assert!(
            stderr(&out).contains("image image/jpeg (3000000 bytes)"),
            "{}",
            stderr(&out)
        );
        let out = daemon.run(&["memory", "media", "000000000000", "--output", "-"]);
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains("no media 000000000000"),
            "{}",
            stderr(&out)
        );
    });
}

#[test]
fn an_item_that_cannot_be_stored_refuses_the_input_and_journals_nothing() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&format!(
            "memory_model = false\n{}",
            source("remote", &server.base_url, 0)
        ));
        let mut raw = Raw::connect(&daemon.socket);
        raw.send(
            &json!({"op": "send", "text": "look at this", "media": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,%%%"}}
            ]})
            .to_string(),
        );
        let lines = raw.until_terminal();
        let last = lines.last().expect("a terminal line");
        assert_eq!(last["type"], "error", "{lines:?}");
        let text = last["error"].as_str().unwrap_or_default();
        assert!(
            text.contains("not accepted") && text.contains("base64"),
            "{text}"
        );
        assert!(
            lines.iter().all(|l| l["type"] != "accepted"),
            "refused before it was acknowledged: {lines:?}"
        );
        assert!(server.seen().is_empty(), "the model was never asked");
        let store = StoreReader::open(daemon.dir.join("memory.db")).expect("store");
        assert!(store.journal_pending().expect("pending").is_empty());
        // The CLI refuses a file the daemon would not keep, before connecting.
        let big = daemon.dir.join("big.png");
        std::fs::write(&big, vec![7u8; 17 * 1024 * 1024]).expect("write");
        let out = daemon.run(&["send", "--attach", big.to_str().expect("path"), "hi"]);
        assert!(!out.status.success());
        assert!(stderr(&out).contains("cannot be sent"), "{}", stderr(&out));
        // A line longer than an operator's 24 MiB is refused with the reason and the
        // connection closed; the daemon goes on serving.
        let stream = std::os::unix::net::UnixStream::connect(&daemon.socket).expect("connect");
        let mut out = stream.try_clone().expect("clone");
        // The daemon stops reading at its limit and closes: the rest of the write may fail.
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            let line = format!(
                "{{\"op\":\"send\",\"text\":\"{}\"}}\n",
                "x".repeat(25 << 20)
            );
            let _ = out.write_all(line.as_bytes());
        });
        let mut first = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stream), &mut first)
            .expect("an answer");
        let _ = writer.join();
        let refused: serde_json::Value = serde_json::from_str(&first).expect("JSON");
        assert_eq!(refused["type"], "error", "{refused}");
        assert!(
            refused["error"]
                .as_str()
                .is_some_and(|e| e.contains("longer than 25165824 bytes")),
            "{refused}"
        );
        let out = daemon.run(&["status"]);
        assert!(out.status.success(), "{}", stderr(&out));
    });
}

#[test]
fn a_note_keeps_the_media_it_names_and_an_unknown_one_is_refused() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&format!(
            "memory_model = false\n{}",
            source("remote", &server.base_url, 0)
        ));
        // Before anything is stored, no name can match.
        let early = tool_turn(
            &daemon,
            &server,
            "remember that picture",
            vec![(
                "doc_commit",
                json!({"content": "x", "media": ["sha256:abababababab"]}),
            )],
        );
        assert!(early[0].contains("nothing has been stored"), "{early:?}");

        let file = daemon.dir.join("bike.png");
        std::fs::write(&file, PICTURE).expect("write the picture");
        let out = daemon.run(&["send", "--attach", file.to_str().expect("path"), "my bike"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let digest = hearth_media::digest_of(PICTURE);
        let results = tool_turn(
            &daemon,
            &server,
            "keep a note about my bike",
            vec![
                (
                    "doc_commit",
                    json!({"content": "Ben's red bicycle", "media": [format!("sha256:{}", &digest[..12])]}),
                ),
                (
                    "doc_commit",
                    json!({"content": "a cat", "media": ["sha256:000000000000"]}),
                ),
                (
                    "doc_commit",
                    json!({"content": "a dog", "media": "not a list"}),
                ),
                (
                    "memory_commit",
                    json!({"subject": "Ben", "predicate": "owns", "object": "red bicycle",
                        "sentence": "Ben's bicycle is red.",
                        "media": [format!("sha256:{}", &digest[..12])]}),
                ),
                (
                    "memory_commit",
                    json!({"subject": "Ben", "predicate": "owns", "object": "green kayak",
                        "media": ["sha256:000000000000"]}),
                ),
            ],
        );
        assert!(results[0].starts_with("stored as memory"), "{results:?}");
        assert!(results[1].contains("no media 000000000000"), "{results:?}");
        assert!(results[2].contains("list of digests"), "{results:?}");
        assert!(results[4].contains("no media 000000000000"), "{results:?}");

        // The fact keeps the kernel's marker in the words it was told in; the refused one is
        // not stored at all.
        let told: serde_json::Value = serde_json::from_str(&results[3]).expect("a tell report");
        let fact = told["inserted"][0].as_str().expect("the fact's id");
        let why = daemon.run(&["memory", "why", fact]);
        assert!(why.status.success(), "{}", stderr(&why));
        let why = String::from_utf8_lossy(&why.stdout);
        assert!(
            why.contains("Ben's bicycle is red.")
                && why.contains(&format!("sha256:{}]", &digest[..12])),
            "{why}"
        );
        let kayak = daemon.run(&["memory", "search", "kayak"]);
        assert!(
            !String::from_utf8_lossy(&kayak.stdout).contains("green kayak"),
            "{}",
            String::from_utf8_lossy(&kayak.stdout)
        );

        // The note in cold context carries the kernel's marker for the picture.
        let store = StoreReader::open(daemon.dir.join("memory.db")).expect("store");
        let marker = format!("sha256:{}]", &digest[..12]);
        let notes: Vec<String> = store
            .cold_ids_after(i64::MIN, 1_000)
            .expect("ids")
            .into_iter()
            .filter_map(|id| store.cold_get(id).expect("read"))
            .map(|e| e.text)
            .filter(|t| t.contains("red bicycle") || t.contains("a cat"))
            .collect();
        assert_eq!(notes.len(), 1, "the refused note is not stored: {notes:?}");
        assert!(notes[0].contains(&marker), "{notes:?}");
    });
}

#[test]
fn a_source_that_takes_images_gets_the_pictures_bytes_and_others_only_the_marker() {
    within(Duration::from_secs(60), || {
        let seeing = LlmServer::start();
        let daemon = Daemon::start(&format!(
            "memory_model = false\n{}vision = true\n",
            source("seeing", &seeing.base_url, 0)
        ));
        let file = daemon.dir.join("bike.png");
        std::fs::write(&file, PICTURE).expect("write the picture");
        let out = daemon.run(&[
            "send",
            "--attach",
            file.to_str().expect("path"),
            "what is it?",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let body = &seeing.wait_requests(1, Duration::from_secs(10))[0].body;
        let user = body["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .expect("the user's message")
            .clone();
        use base64::Engine;
        let url = format!(
            "data:image/png;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(PICTURE)
        );
        assert!(
            user["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("what is it?\n[image image/png")),
            "{user}"
        );
        assert_eq!(user["content"][1]["type"], "image_url", "{user}");
        assert_eq!(user["content"][1]["image_url"]["url"], url.as_str());
        assert!(
            user.get("media").is_none(),
            "references stay in the daemon: {user}"
        );
    });
}
