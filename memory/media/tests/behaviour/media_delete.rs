//! Deleting an item deletes its content: row and blob.

use hearth_media::MediaError;

use crate::support::{files_under, fresh, mime, rows};

#[test]
fn delete_removes_row_and_blob() {
    let (_tmp, dir, mut store) = fresh();
    let keep = store.put(b"keep me", &mime("")).unwrap().digest;
    let gone = store.put(b"forget me", &mime("image/png")).unwrap().digest;
    store.set_vector(&gone, "clip-a", &[1.0]).unwrap();
    let path = store.blob_path(&gone).unwrap();
    store.delete(&gone).unwrap();
    assert!(!path.exists());
    assert_eq!(rows(&dir), 1);
    assert!(matches!(store.get(&gone), Err(MediaError::NotFound { .. })));
    assert!(matches!(
        store.meta(&gone),
        Err(MediaError::NotFound { .. })
    ));
    assert!(store.vectors("clip-a").unwrap().is_empty());
    assert_eq!(store.get(&keep).unwrap(), b"keep me");
    assert_eq!(files_under(&dir.join("blobs")).len(), 1);
    assert!(store.verify_all().unwrap().is_clean());
    // Stored again after a delete, it is a new item.
    assert!(store.put(b"forget me", &mime("")).unwrap().new);
}

#[test]
fn delete_of_unknown_is_not_found() {
    let (_tmp, _dir, mut store) = fresh();
    let unknown = "a".repeat(64);
    match store.delete(&unknown) {
        Err(MediaError::NotFound { digest }) => assert_eq!(digest, unknown),
        other => panic!("expected NotFound, got {other:?}"),
    }
}

#[test]
fn delete_completes_when_the_blob_is_already_gone() {
    // What a crash between the unlink and the commit leaves: a row without its blob.
    let (_tmp, dir, mut store) = fresh();
    let d = store.put(b"half deleted", &mime("")).unwrap().digest;
    std::fs::remove_file(store.blob_path(&d).unwrap()).unwrap();
    store.delete(&d).unwrap();
    assert_eq!(rows(&dir), 0);
}
