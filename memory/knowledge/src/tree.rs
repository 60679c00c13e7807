//! The `knowledge_list` view: documents as an indented tree of categories.

use std::collections::BTreeMap;

use crate::DocInfo;

#[derive(Default)]
struct Node<'a> {
    /// The document at this path, if there is one.
    doc: Option<&'a DocInfo>,
    children: BTreeMap<&'a str, Node<'a>>,
}

/// Renders `docs` as an indented tree: a category is a line ending in `/` with its contents
/// indented two spaces below it, a document is its last name segment, and a skipped document
/// says why. Children are sorted by name; a name that is both a document and a category
/// shows as both. Built as a tree rather than read off the sorted list, because byte order
/// puts `a-b` between `a` and `a/b`.
///
/// ```
/// # use hearth_knowledge::{DocInfo, tree};
/// let doc = |name: &str| DocInfo {
///     name: name.into(),
///     category: hearth_knowledge::category_of(name).into(),
///     bytes: 1,
///     modified_ms: 0,
///     skipped: None,
/// };
/// let docs = [doc("recipes/bread"), doc("recipes/soup"), doc("travel")];
/// assert_eq!(tree(&docs), "recipes/\n  bread\n  soup\ntravel\n");
/// ```
pub fn tree(docs: &[DocInfo]) -> String {
    let mut root = Node::default();
    for doc in docs {
        let mut node = &mut root;
        for segment in doc.name.split('/') {
            node = node.children.entry(segment).or_default();
        }
        node.doc = Some(doc);
    }
    let mut out = String::new();
    render(&root, 0, &mut out);
    out
}

fn render(node: &Node<'_>, depth: usize, out: &mut String) {
    let indent = "  ".repeat(depth);
    for (segment, child) in &node.children {
        if let Some(doc) = child.doc {
            out.push_str(&indent);
            out.push_str(segment);
            if let Some(reason) = &doc.skipped {
                out.push_str(&format!(" (skipped: {reason})"));
            }
            out.push('\n');
        }
        if !child.children.is_empty() {
            out.push_str(&format!("{indent}{segment}/\n"));
            render(child, depth + 1, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, skipped: Option<&str>) -> DocInfo {
        DocInfo {
            name: name.into(),
            category: crate::category_of(name).into(),
            bytes: 0,
            modified_ms: 0,
            skipped: skipped.map(Into::into),
        }
    }

    #[test]
    fn nested_categories_documents_that_are_also_categories_and_skips() {
        let docs = [
            doc("a", None),
            doc("a-b", Some("not UTF-8 text")),
            doc("a/x/y", None),
            doc("a/z", None),
        ];
        assert_eq!(
            tree(&docs),
            "a\na/\n  x/\n    y\n  z\na-b (skipped: not UTF-8 text)\n"
        );
        assert_eq!(tree(&[]), "");
    }
}
