//! put → get round-trips bytes, under the sha256 of the bytes, at a two-level fan-out path
//! with private modes.

use hearth_media::{MediaKind, MediaStore, digest_of};

use crate::support::{fresh, mime, mode};

const ABC_SHA256: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

#[test]
fn digest_is_sha256_of_the_bytes() {
    assert_eq!(digest_of(b"abc"), ABC_SHA256);
    let (_tmp, _dir, mut store) = fresh();
    let stored = store.put(b"abc", &mime("text/plain")).unwrap();
    assert_eq!(stored.digest, ABC_SHA256);
    assert_eq!(stored.bytes, 3);
    assert!(stored.new);
}

#[test]
fn put_then_get_returns_the_same_bytes() {
    let (_tmp, _dir, mut store) = fresh();
    let data: Vec<u8> = (0..200_000u32).map(|i| (i * 31 % 251) as u8).collect();
    let stored = store.put(&data, &mime("image/jpeg")).unwrap();
    assert_eq!(store.get(&stored.digest).unwrap(), data);
    let info = store.meta(&stored.digest).unwrap();
    assert_eq!(info.kind, MediaKind::Image);
    assert_eq!(info.mime, "image/jpeg");
    assert_eq!(info.bytes, data.len() as u64);
    assert!(info.created_ms > 0 && info.last_seen_ms >= info.created_ms);
    assert_eq!(info.vector, None);
}

#[test]
fn blob_path_is_two_level_fan_out_with_private_modes() {
    let (_tmp, dir, mut store) = fresh();
    let stored = store.put(b"abc", &mime("")).unwrap();
    let blob = dir
        .join("blobs")
        .join(&ABC_SHA256[..2])
        .join(&ABC_SHA256[2..]);
    assert_eq!(store.blob_path(&stored.digest).unwrap(), blob);
    assert_eq!(std::fs::read(&blob).unwrap(), b"abc");
    assert_eq!(mode(&blob), 0o600, "blob");
    assert_eq!(mode(blob.parent().unwrap()), 0o700, "fan-out dir");
    assert_eq!(mode(&dir.join("blobs")), 0o700, "blobs dir");
    assert_eq!(mode(&dir), 0o700, "media dir");
    assert_eq!(mode(&dir.join("media.db")), 0o600, "media.db");
}

#[test]
fn kind_follows_the_mime_type() {
    let (_tmp, _dir, mut store) = fresh();
    for (i, (m, kind)) in [
        ("image/png", MediaKind::Image),
        ("Audio/OGG; codecs=opus", MediaKind::Audio),
        ("video/mp4", MediaKind::Video),
        ("application/pdf", MediaKind::Other),
        ("", MediaKind::Other),
    ]
    .into_iter()
    .enumerate()
    {
        let stored = store.put(&[i as u8 + 1; 10], &mime(m)).unwrap();
        let info = store.meta(&stored.digest).unwrap();
        assert_eq!(info.kind, kind, "{m:?}");
        assert_eq!(info.mime, m.trim().to_ascii_lowercase());
    }
}

#[test]
fn items_survive_reopening() {
    let (_tmp, dir, mut store) = fresh();
    let stored = store
        .put(b"kept across restarts", &mime("text/plain"))
        .unwrap();
    drop(store);
    let store = MediaStore::open(&dir).unwrap();
    assert_eq!(store.get(&stored.digest).unwrap(), b"kept across restarts");
    assert_eq!(store.len().unwrap(), 1);
    assert!(store.verify_all().unwrap().is_clean());
}

#[test]
fn a_digest_prefix_resolves_to_the_one_item_it_names() {
    let (_tmp, dir, mut store) = fresh();
    let abc = store.put(b"abc", &mime("text/plain")).unwrap().digest;
    assert_eq!(store.resolve(&abc).unwrap(), abc);
    assert_eq!(store.resolve(&abc[..12]).unwrap(), abc);
    assert_eq!(
        store.resolve(&format!("sha256:{}", &abc[..12])).unwrap(),
        abc
    );
    // Too short, not hex, or naming nothing: said, never guessed.
    for bad in [&abc[..11], "ZZZZZZZZZZZZ", "ba7816bf8f0x"] {
        assert!(
            matches!(
                store.resolve(bad),
                Err(hearth_media::MediaError::InvalidDigest { .. })
            ),
            "{bad}"
        );
    }
    assert!(matches!(
        store.resolve("000000000000"),
        Err(hearth_media::MediaError::NotFound { .. })
    ));
    // Two items under one prefix (a second row written beside the store, since no two real
    // contents share twelve hex characters in a test's lifetime): the caller must say which.
    let twin = format!("{}{}", &abc[..12], "0".repeat(52));
    let conn = rusqlite::Connection::open(dir.join("media.db")).unwrap();
    conn.execute(
        "INSERT INTO media (digest, kind, mime, bytes, description, described_by, created_ms, \
         last_seen_ms) VALUES (?1, 'other', 'text/plain', 1, '', '', 1, 1)",
        [&twin],
    )
    .unwrap();
    assert!(matches!(
        store.resolve(&abc[..12]),
        Err(hearth_media::MediaError::Ambiguous { .. })
    ));
    assert_eq!(
        store.resolve(&abc[..13]).unwrap(),
        abc,
        "one more character tells them apart"
    );
}
