//! Optional vectors: stored per fingerprint, never mixed across fingerprints, one dimension per
//! fingerprint.

use hearth_media::{MediaError, MediaKind};

use crate::support::{fresh, mime};

#[test]
fn vectors_come_back_by_fingerprint_only() {
    let (_tmp, _dir, mut store) = fresh();
    let a = store.put(b"image a", &mime("image/png")).unwrap().digest;
    let b = store.put(b"image b", &mime("image/png")).unwrap().digest;
    let c = store.put(b"image c", &mime("image/png")).unwrap().digest;
    store.set_vector(&a, "clip-a", &[0.5, -1.25, 3.0]).unwrap();
    store
        .set_vector(&b, "clip-a", &[1.0, 0.0, f32::MIN_POSITIVE])
        .unwrap();
    store.set_vector(&c, "clip-b", &[9.0, 9.0]).unwrap();

    let mut want = vec![
        (a.clone(), vec![0.5, -1.25, 3.0]),
        (b.clone(), vec![1.0, 0.0, f32::MIN_POSITIVE]),
    ];
    want.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(store.vectors("clip-a").unwrap(), want);
    assert_eq!(
        store.vectors("clip-b").unwrap(),
        vec![(c.clone(), vec![9.0, 9.0])]
    );
    assert!(store.vectors("clip-c").unwrap().is_empty());
    assert_eq!(
        store.meta(&a).unwrap().vector,
        Some(("clip-a".to_string(), 3))
    );
}

#[test]
fn a_new_space_replaces_the_old_vector() {
    let (_tmp, _dir, mut store) = fresh();
    let a = store.put(b"image a", &mime("image/png")).unwrap().digest;
    let t = store
        .put(b"a text file", &mime("text/plain"))
        .unwrap()
        .digest;
    store.set_vector(&a, "clip-a", &[1.0, 2.0]).unwrap();
    assert_eq!(
        store.stale_vectors("clip-b", &[MediaKind::Image]).unwrap(),
        vec![a.clone()]
    );
    assert_eq!(store.stale_vectors("clip-a", &[]).unwrap(), vec![t.clone()]);
    store
        .set_vector(&a, "clip-b", &[1.0, 2.0, 3.0, 4.0])
        .unwrap();
    assert!(store.vectors("clip-a").unwrap().is_empty());
    assert_eq!(store.vectors("clip-b").unwrap().len(), 1);
    assert!(
        store
            .stale_vectors("clip-b", &[MediaKind::Image])
            .unwrap()
            .is_empty()
    );
    store.clear_vector(&a).unwrap();
    assert_eq!(store.meta(&a).unwrap().vector, None);
}

#[test]
fn a_dimension_mismatch_within_a_fingerprint_is_refused() {
    let (_tmp, _dir, mut store) = fresh();
    let a = store.put(b"image a", &mime("image/png")).unwrap().digest;
    let b = store.put(b"image b", &mime("image/png")).unwrap().digest;
    store.set_vector(&a, "clip-a", &[1.0, 2.0, 3.0]).unwrap();
    match store.set_vector(&b, "clip-a", &[1.0, 2.0]) {
        Err(MediaError::DimensionMismatch {
            expected,
            got,
            fingerprint,
            ..
        }) => assert_eq!((expected, got, fingerprint.as_str()), (3, 2, "clip-a")),
        other => panic!("expected DimensionMismatch, got {other:?}"),
    }
    assert_eq!(store.meta(&b).unwrap().vector, None, "nothing was written");
    // The only vector of a space may be replaced by one of another size.
    store.set_vector(&a, "clip-a", &[1.0]).unwrap();
}

#[test]
fn invalid_vectors_are_refused() {
    let (_tmp, _dir, mut store) = fresh();
    let a = store.put(b"image a", &mime("image/png")).unwrap().digest;
    for (fp, v) in [
        ("clip-a", &[][..]),
        ("", &[1.0][..]),
        ("clip-a", &[1.0, f32::NAN][..]),
        ("clip-a", &[f32::INFINITY][..]),
    ] {
        assert!(
            matches!(
                store.set_vector(&a, fp, v),
                Err(MediaError::InvalidVector { .. })
            ),
            "{fp:?} {v:?}"
        );
    }
    let unknown = "f".repeat(64);
    assert!(matches!(
        store.set_vector(&unknown, "clip-a", &[1.0]),
        Err(MediaError::NotFound { .. })
    ));
    assert_eq!(store.meta(&a).unwrap().vector, None);
}
