//! Bad input is a clear, typed error and writes nothing.

use hearth_media::{DEFAULT_MAX_BYTES, MediaError};

use crate::support::{files_under, fresh, mime, rows};

#[test]
fn empty_data_is_refused() {
    let (_tmp, dir, mut store) = fresh();
    let before = files_under(&dir.join("blobs"));
    let err = store.put(b"", &mime("image/png")).unwrap_err();
    assert!(matches!(err, MediaError::Empty), "{err:?}");
    assert!(err.to_string().contains("empty"), "{err}");
    assert_eq!(files_under(&dir.join("blobs")), before);
    assert_eq!(rows(&dir), 0);
}

#[test]
fn over_the_limit_is_refused() {
    let (_tmp, dir, mut store) = fresh();
    assert_eq!(store.max_bytes(), DEFAULT_MAX_BYTES);
    assert_eq!(DEFAULT_MAX_BYTES, 64 * 1024 * 1024);
    store.set_max_bytes(1000);
    store.put(&[7u8; 1000], &mime("")).unwrap();
    match store.put(&[7u8; 1001], &mime("")) {
        Err(MediaError::TooLarge { bytes, limit }) => assert_eq!((bytes, limit), (1001, 1000)),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert_eq!(rows(&dir), 1, "only the item within the limit");
    assert_eq!(files_under(&dir.join("blobs")).len(), 1);
}

#[test]
fn the_default_limit_refuses_more_than_64_mib() {
    let (_tmp, dir, mut store) = fresh();
    let data = vec![0u8; DEFAULT_MAX_BYTES as usize + 1];
    assert!(matches!(
        store.put(&data, &mime("")),
        Err(MediaError::TooLarge { .. })
    ));
    assert!(files_under(&dir.join("blobs")).is_empty());
}

#[test]
fn invalid_digests_are_refused_everywhere() {
    let (_tmp, dir, mut store) = fresh();
    let good = store.put(b"abc", &mime("")).unwrap().digest;
    let before = files_under(&dir);
    let upper = good.to_ascii_uppercase();
    let short = &good[..63];
    let long = format!("{good}0");
    let non_hex = format!("{}g", &good[..63]);
    let traversal = format!("../etc/{}", &good[..57]);
    let bad = [
        "../etc",
        upper.as_str(),
        short,
        long.as_str(),
        non_hex.as_str(),
        traversal.as_str(),
        "",
    ];
    for digest in bad {
        let invalid =
            |r: Result<(), MediaError>| matches!(r, Err(MediaError::InvalidDigest { .. }));
        assert!(invalid(store.get(digest).map(drop)), "get {digest:?}");
        assert!(invalid(store.meta(digest).map(drop)), "meta {digest:?}");
        assert!(
            invalid(store.blob_path(digest).map(drop)),
            "path {digest:?}"
        );
        assert!(invalid(store.delete(digest)), "delete {digest:?}");
        assert!(
            invalid(store.set_vector(digest, "fp", &[1.0])),
            "vector {digest:?}"
        );
        let message = store.get(digest).unwrap_err().to_string();
        assert!(message.contains("invalid media digest"), "{message}");
    }
    assert_eq!(files_under(&dir), before);
    assert_eq!(store.get(&good).unwrap(), b"abc");
}

#[test]
fn unknown_digest_is_not_found() {
    let (_tmp, _dir, store) = fresh();
    let unknown = "0".repeat(64);
    assert!(matches!(
        store.get(&unknown),
        Err(MediaError::NotFound { .. })
    ));
    assert!(matches!(
        store.meta(&unknown),
        Err(MediaError::NotFound { .. })
    ));
}
