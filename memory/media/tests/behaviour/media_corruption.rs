//! Damage on disk is reported, never returned as content: a flipped byte or a truncated blob
//! is `Corrupted`, a removed blob is `Missing`, and `verify_all` lists both without deleting.

use hearth_media::MediaError;

use crate::support::{fresh, mime};

#[test]
fn flipped_byte_is_corrupted_and_listed() {
    let (_tmp, _dir, mut store) = fresh();
    let good = store.put(b"untouched", &mime("text/plain")).unwrap();
    let bad = store.put(b"a holiday photo", &mime("image/png")).unwrap();
    let path = store.blob_path(&bad.digest).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[3] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();

    match store.get(&bad.digest) {
        Err(MediaError::Corrupted { digest, path: p }) => {
            assert_eq!(digest, bad.digest);
            assert_eq!(p, path);
        }
        other => panic!("expected Corrupted, got {other:?}"),
    }
    let message = store.get(&bad.digest).unwrap_err().to_string();
    assert!(message.contains("content corrupted"), "{message}");
    assert!(message.contains(&bad.digest), "{message}");

    let report = store.verify_all().unwrap();
    assert_eq!(report.corrupted, vec![bad.digest.clone()]);
    assert!(report.missing.is_empty() && report.orphans.is_empty());
    assert_eq!(report.checked, 2);
    assert!(!report.is_clean());
    // Reporting is all it does: the damaged file and the intact item are still there.
    assert!(path.exists());
    assert_eq!(store.get(&good.digest).unwrap(), b"untouched");
}

#[test]
fn truncated_blob_is_corrupted() {
    let (_tmp, _dir, mut store) = fresh();
    let stored = store.put(b"0123456789", &mime("")).unwrap();
    let path = store.blob_path(&stored.digest).unwrap();
    std::fs::write(&path, b"01234").unwrap();
    assert!(matches!(
        store.get(&stored.digest),
        Err(MediaError::Corrupted { .. })
    ));
    // Grown past its size (bytes appended) is just as wrong.
    std::fs::write(&path, b"0123456789 and more").unwrap();
    assert!(matches!(
        store.get(&stored.digest),
        Err(MediaError::Corrupted { .. })
    ));
    assert_eq!(store.verify_all().unwrap().corrupted, vec![stored.digest]);
}

#[test]
fn removed_blob_is_missing() {
    let (_tmp, _dir, mut store) = fresh();
    let stored = store.put(b"soon gone", &mime("")).unwrap();
    let path = store.blob_path(&stored.digest).unwrap();
    std::fs::remove_file(&path).unwrap();
    match store.get(&stored.digest) {
        Err(MediaError::Missing { digest, path: p }) => {
            assert_eq!((digest, p), (stored.digest.clone(), path));
        }
        other => panic!("expected Missing, got {other:?}"),
    }
    let report = store.verify_all().unwrap();
    assert_eq!(report.missing, vec![stored.digest.clone()]);
    assert_eq!(report.checked, 0);
    // The row stays: metadata is still readable.
    assert_eq!(store.meta(&stored.digest).unwrap().bytes, 9);
}

#[test]
fn put_of_the_same_bytes_repairs_a_damaged_blob() {
    let (_tmp, _dir, mut store) = fresh();
    let stored = store.put(b"original bytes", &mime("")).unwrap();
    let path = store.blob_path(&stored.digest).unwrap();
    std::fs::write(&path, b"original bytez").unwrap();
    assert!(!store.put(b"original bytes", &mime("")).unwrap().new);
    assert_eq!(store.get(&stored.digest).unwrap(), b"original bytes");
    std::fs::remove_file(&path).unwrap();
    store.put(b"original bytes", &mime("")).unwrap();
    assert_eq!(store.get(&stored.digest).unwrap(), b"original bytes");
    assert!(store.verify_all().unwrap().is_clean());
}

#[test]
fn a_blob_read_without_the_database_is_verified_too() {
    let (_tmp, dir, mut store) = fresh();
    let item = store.put(b"a holiday photo", &mime("image/png")).unwrap();
    assert_eq!(
        hearth_media::read_blob(&dir, &item.digest).unwrap(),
        b"a holiday photo"
    );
    let path = store.blob_path(&item.digest).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[0] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    assert!(matches!(
        hearth_media::read_blob(&dir, &item.digest),
        Err(MediaError::Corrupted { .. })
    ));
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(
        hearth_media::read_blob(&dir, &item.digest),
        Err(MediaError::Missing { .. })
    ));
    assert!(matches!(
        hearth_media::read_blob(&dir, "../../etc/passwd"),
        Err(MediaError::InvalidDigest { .. })
    ));
}
