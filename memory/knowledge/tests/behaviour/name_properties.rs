//! Property: any accepted name round-trips create → list → read → delete, and any refused name
//! writes nothing under the root.

use hearth_knowledge::{KnowledgeError, validate_name};
use proptest::prelude::*;

use crate::support::{open, tree_of};

/// Segments from the accepted alphabet (with Chinese letters), sometimes with an inner space
/// or dot.
fn segment() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_面包猫][a-zA-Z0-9_面包猫. -]{0,10}[a-zA-Z0-9_面包猫]?"
        .prop_filter("no trailing space", |s| !s.ends_with(' '))
}

fn accepted_name() -> impl Strategy<Value = String> {
    prop::collection::vec(segment(), 1..=4).prop_map(|segments| segments.join("/"))
}

/// Mostly names near the accepted shape, plus arbitrary strings.
fn any_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z./ ]{0,12}",
        "(\\.\\.|\\.|/|a|b|面){1,8}",
        any::<String>(),
        accepted_name(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn accepted_names_round_trip(name in accepted_name(), body in "[a-z 面包]{0,40}") {
        prop_assume!(validate_name(&name).is_ok());
        let mut t = open(None);
        let created = t.kb.create(&name, &body, false).unwrap();
        prop_assert!(!created.replaced);
        prop_assert_eq!(t.listed(), vec![name.clone()]);
        prop_assert_eq!(t.kb.read(&name).unwrap(), body);
        t.kb.delete(&name).unwrap();
        prop_assert!(t.listed().is_empty());
        let gone = matches!(t.kb.read(&name), Err(KnowledgeError::NotFound { .. }));
        prop_assert!(gone);
    }

    #[test]
    fn refused_names_write_nothing(name in any_name()) {
        let mut t = open(None);
        match t.kb.create(&name, "body", false) {
            Ok(_) => {
                prop_assert!(validate_name(&name).is_ok());
                prop_assert_eq!(t.listed(), vec![name.clone()]);
            }
            Err(KnowledgeError::InvalidName { .. }) => {
                prop_assert!(validate_name(&name).is_err());
                prop_assert!(tree_of(&t.root).is_empty(), "{:?}", tree_of(&t.root));
                // Beside the root only the index and its WAL files.
                let beside: Vec<String> = tree_of(t.dir.path())
                    .into_iter()
                    .filter(|p| p != "knowledge" && !p.starts_with("knowledge.db"))
                    .collect();
                prop_assert!(beside.is_empty(), "{:?}", beside);
            }
            Err(e) => prop_assert!(false, "unexpected error for {:?}: {}", name, e),
        }
    }
}
