//! Files edited, deleted or created by hand while the knowledge base is open are picked up by
//! the next operation.

use std::sync::Arc;

use crate::support::{ConceptEmbedder, bump_mtime, open, write_on_disk};

#[test]
fn an_edited_file_is_reindexed_and_its_old_words_are_gone() {
    let mut t = open(None);
    t.kb.create("pets", "Our cat is called Miso.", false)
        .unwrap();
    assert_eq!(t.names("Miso"), ["pets"]);

    write_on_disk(&t.file("pets"), b"Our dog is called Tofu.", 5);
    assert_eq!(t.names("Tofu"), ["pets"]);
    assert!(t.names("Miso").is_empty());
    assert_eq!(t.kb.read("pets").unwrap(), "Our dog is called Tofu.");
}

#[test]
fn an_edit_of_the_same_size_is_caught_by_the_modification_time() {
    let mut t = open(None);
    t.kb.create("code", "alpha", false).unwrap();
    write_on_disk(&t.file("code"), b"omega", 5);
    assert_eq!(t.names("omega"), ["code"]);
    assert!(t.names("alpha").is_empty());
}

#[test]
fn a_touched_file_is_not_reindexed() {
    let mut t = open(None);
    t.kb.create("a", "one", false).unwrap();
    t.kb.create("b", "two", false).unwrap();
    let quiet = t.kb.sync().unwrap();
    assert_eq!((quiet.unchanged, quiet.added, quiet.updated), (2, 0, 0));
    bump_mtime(&t.file("a"), 10);
    let report = t.kb.sync().unwrap();
    assert_eq!(
        (
            report.unchanged,
            report.updated,
            report.added,
            report.removed
        ),
        (2, 0, 0, 0)
    );
}

#[test]
fn a_file_deleted_on_disk_disappears_from_search_and_list() {
    let mut t = open(None);
    t.kb.create("keep", "apples", false).unwrap();
    t.kb.create("gone/away", "apples and pears", false).unwrap();
    assert_eq!(t.names("apples").len(), 2);

    std::fs::remove_dir_all(t.root.join("gone")).unwrap();
    let report = t.kb.sync().unwrap();
    assert_eq!(report.removed, 1);
    assert_eq!(t.names("apples"), ["keep"]);
    assert!(t.names("pears").is_empty());
    assert_eq!(t.listed(), ["keep"]);
}

#[test]
fn a_directory_made_by_hand_appears() {
    let mut t = open(None);
    write_on_disk(
        &t.root.join("hand made/deep/note").join("content.md"),
        "Written in vim: the wifi password is on the fridge.".as_bytes(),
        0,
    );
    assert_eq!(t.listed(), ["hand made/deep/note"]);
    let hits = t.kb.search("wifi password", 5).unwrap();
    assert_eq!(hits[0].name, "hand made/deep/note");
    assert_eq!(hits[0].category, "hand made/deep");
    let report = t.kb.sync().unwrap();
    assert_eq!((report.unchanged, report.added), (1, 0));
}

#[test]
fn hidden_entries_and_symlinks_leaving_the_root_are_not_indexed() {
    let mut t = open(None);
    write_on_disk(&t.root.join(".git/objects/content.md"), b"secret", 0);
    write_on_disk(&t.root.join("notes/.swap/content.md"), b"secret", 0);
    let outside = t.dir.path().join("outside");
    write_on_disk(&outside.join("content.md"), b"secret", 0);
    std::os::unix::fs::symlink(&outside, t.root.join("escape")).unwrap();
    // A link inside the root is followed; a link to its own ancestor is a loop.
    write_on_disk(&t.root.join("real/content.md"), b"visible", 0);
    std::os::unix::fs::symlink(t.root.join("real"), t.root.join("alias")).unwrap();
    std::os::unix::fs::symlink(t.root.join("real"), t.root.join("real/loop")).unwrap();

    let report = t.kb.sync().unwrap();
    let skipped: Vec<(&str, &str)> = report
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [
            (
                "alias/loop",
                "a symlink to a directory it is inside of (a loop)"
            ),
            ("escape", "a symlink that leaves the knowledge root"),
            (
                "real/loop",
                "a symlink to a directory it is inside of (a loop)"
            ),
        ]
    );
    assert_eq!(t.listed(), ["alias", "real"]);
    assert!(t.names("secret").is_empty());
}

#[test]
fn vectors_follow_edits_on_disk() {
    let embedder = ConceptEmbedder::new("0123456789ab");
    let mut t = open(Some(embedder.clone() as Arc<_>));
    t.kb.create("shopping", "Buy a loaf on the way home.", false)
        .unwrap();
    assert_eq!(t.names("bread"), ["shopping"]);
    write_on_disk(&t.file("shopping"), b"Buy stamps on the way home.", 5);
    assert!(t.names("bread").is_empty());
    assert_eq!(t.names("stamps"), ["shopping"]);
}

#[test]
fn the_walk_stops_at_eight_levels() {
    let mut t = open(None);
    let eight = "1/2/3/4/5/6/7/8";
    write_on_disk(&t.file(eight), b"deep but allowed", 0);
    write_on_disk(&t.file(&format!("{eight}/9")), b"too deep", 0);
    let report = t.kb.sync().unwrap();
    assert_eq!(report.added, 1);
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].path, format!("{eight}/9"));
    assert_eq!(report.skipped[0].reason, "deeper than 8 levels");
    // A hand-made name deeper than `create` allows is still readable and deletable.
    assert_eq!(t.kb.read(eight).unwrap(), "deep but allowed");
    t.kb.delete(eight).unwrap();
    assert!(t.listed().is_empty());
}
