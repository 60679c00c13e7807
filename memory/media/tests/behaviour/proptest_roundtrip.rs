//! Any non-empty byte string round-trips, under the sha256 of its bytes.

use proptest::prelude::*;
use sha2::{Digest, Sha256};

use crate::support::{fresh, mime};

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn any_bytes_round_trip(items in prop::collection::vec(prop::collection::vec(any::<u8>(), 1..4096), 1..6)) {
        let (_tmp, _dir, mut store) = fresh();
        for data in &items {
            let stored = store.put(data, &mime("application/octet-stream")).unwrap();
            prop_assert_eq!(&stored.digest, &sha256_hex(data));
            prop_assert_eq!(stored.bytes, data.len() as u64);
            prop_assert_eq!(store.get(&stored.digest).unwrap(), data.clone());
        }
        let distinct: std::collections::HashSet<_> = items.iter().collect();
        prop_assert_eq!(store.len().unwrap(), distinct.len());
        prop_assert!(store.verify_all().unwrap().is_clean());
    }
}
