//! The same bytes stored twice: one blob, `new` only the first time, and metadata filled only
//! where it was empty.

use hearth_media::{MediaKind, MediaMeta};

use crate::support::{files_under, fresh, mime};

#[test]
fn same_bytes_twice_keep_one_blob() {
    let (_tmp, dir, mut store) = fresh();
    let first = store.put(b"a photo", &mime("image/png")).unwrap();
    let before = files_under(&dir.join("blobs"));
    let second = store.put(b"a photo", &mime("image/png")).unwrap();
    assert!(first.new);
    assert!(!second.new);
    assert_eq!(first.digest, second.digest);
    assert_eq!(files_under(&dir.join("blobs")), before);
    assert_eq!(before.len(), 1);
    assert_eq!(store.len().unwrap(), 1);
}

#[test]
fn known_metadata_is_not_overwritten() {
    let (_tmp, _dir, mut store) = fresh();
    let first = MediaMeta {
        mime: "image/png".into(),
        description: "a cat on a sofa".into(),
        described_by: "vision-a".into(),
        width: Some(640),
        height: Some(480),
    };
    let d = store.put(b"cat", &first).unwrap().digest;
    let created = store.meta(&d).unwrap().created_ms;
    std::thread::sleep(std::time::Duration::from_millis(5));
    let second = MediaMeta {
        mime: "image/jpeg".into(),
        description: "a dog".into(),
        described_by: "vision-b".into(),
        width: Some(1),
        height: Some(2),
    };
    store.put(b"cat", &second).unwrap();
    let info = store.meta(&d).unwrap();
    assert_eq!(info.mime, "image/png");
    assert_eq!(info.kind, MediaKind::Image);
    assert_eq!(info.description, "a cat on a sofa");
    assert_eq!(info.described_by, "vision-a");
    assert_eq!((info.width, info.height), (Some(640), Some(480)));
    assert_eq!(info.created_ms, created);
    assert!(info.last_seen_ms > created, "last_seen refreshed");
}

#[test]
fn empty_metadata_is_filled_later() {
    let (_tmp, _dir, mut store) = fresh();
    let d = store
        .put(b"voice note", &MediaMeta::default())
        .unwrap()
        .digest;
    let info = store.meta(&d).unwrap();
    assert_eq!((info.kind, info.mime.as_str()), (MediaKind::Other, ""));
    let later = MediaMeta {
        mime: "audio/ogg".into(),
        description: "asks about dinner".into(),
        described_by: "whisper".into(),
        width: None,
        height: None,
    };
    store.put(b"voice note", &later).unwrap();
    let info = store.meta(&d).unwrap();
    assert_eq!(
        info.kind,
        MediaKind::Audio,
        "kind follows the filled MIME type"
    );
    assert_eq!(info.mime, "audio/ogg");
    assert_eq!(info.description, "asks about dinner");
    assert_eq!(info.described_by, "whisper");
}

#[test]
fn an_author_is_not_credited_with_an_existing_description() {
    let (_tmp, _dir, mut store) = fresh();
    let first = MediaMeta {
        description: "written by hand".into(),
        ..MediaMeta::default()
    };
    let d = store.put(b"x", &first).unwrap().digest;
    let second = MediaMeta {
        description: "another caption".into(),
        described_by: "vision-b".into(),
        ..MediaMeta::default()
    };
    store.put(b"x", &second).unwrap();
    let info = store.meta(&d).unwrap();
    assert_eq!(info.description, "written by hand");
    assert_eq!(info.described_by, "");
}
