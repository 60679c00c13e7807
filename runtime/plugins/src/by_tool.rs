//! The reverse methods the kernel serves with its own built-in tools (SPEC §6.3's graph
//! memory, document, knowledge and social groups): a plugin's `knowledge.search` is the
//! model's `knowledge_search`, with the same validation, limits and audit, so there is one
//! implementation of each rule. Each row says which tool, how the method's params become the
//! tool's arguments, and how its result becomes the method's answer.

use hearth_rpc::{HandlerError, methods};
use serde_json::{Map, Value, json};

/// One method served by one tool.
pub(crate) struct ByTool {
    /// The wire method.
    pub(crate) method: &'static str,
    /// The kernel's tool that serves it.
    pub(crate) tool: &'static str,
    /// The tool's arguments from the method's params (the call's `ctx` already removed).
    pub(crate) args: fn(&str, Value) -> Result<Value, HandlerError>,
    /// The method's answer from the tool's result.
    pub(crate) answer: fn(Value) -> Value,
}

/// The params as they came.
fn same(_: &str, params: Value) -> Result<Value, HandlerError> {
    Ok(params)
}

/// The result as it came.
fn as_is(result: Value) -> Value {
    result
}

/// `{doc: {content, summary?}, media?}` → the note tool's `{content, summary, media}`.
fn doc(method: &str, params: Value) -> Result<Value, HandlerError> {
    let doc = &params["doc"];
    let content = doc["content"].as_str().ok_or_else(|| {
        HandlerError::invalid_arguments(format!("{method}: doc.content must be a string"))
    })?;
    let mut args = json!({"content": content, "summary": doc["summary"]});
    // The original named them `media_digests`, in the doc or beside it.
    let media = [&params["media"], &doc["media"], &doc["media_digests"]]
        .into_iter()
        .find(|m| !m.is_null());
    if let Some(media) = media {
        args["media"] = media.clone();
    }
    Ok(args)
}

/// `{criteria: {…}, mode?}` → the purge tool's flat `{subject?, predicate?, object?,
/// cold_item?, mode?}`; the tool refuses any criterion it does not know.
fn purge(method: &str, params: Value) -> Result<Value, HandlerError> {
    let Some(criteria) = params["criteria"].as_object() else {
        return Err(HandlerError::invalid_arguments(format!(
            "{method}: criteria must be an object (subject, predicate, object, cold_item)"
        )));
    };
    let mut args: Map<String, Value> = criteria.clone();
    if let Some(mode) = params.get("mode") {
        args.insert("mode".into(), mode.clone());
    }
    Ok(Value::Object(args))
}

/// `{name}` → the person's direct relations to other people (a network of depth 1).
fn direct(method: &str, params: Value) -> Result<Value, HandlerError> {
    let name = params["name"].as_str().ok_or_else(|| {
        HandlerError::invalid_arguments(format!("{method}: name must be a string"))
    })?;
    Ok(json!({"name": name, "depth": 1}))
}

/// A knowledge search answered with its hits as well as its text.
fn with_hits(_: &str, mut params: Value) -> Result<Value, HandlerError> {
    if let Value::Object(args) = &mut params {
        args.insert("hits".into(), Value::Bool(true));
    }
    Ok(params)
}

/// The knowledge base's names, flat.
fn flat(_: &str, _: Value) -> Result<Value, HandlerError> {
    Ok(json!({"flat": true}))
}

/// Every method the kernel serves with a tool.
pub(crate) const BY_TOOL: &[ByTool] = &[
    ByTool {
        method: methods::MEMORY_INTROSPECT,
        tool: "memory_introspect",
        args: same,
        answer: as_is,
    },
    ByTool {
        method: methods::MEMORY_MERGE,
        tool: "memory_merge",
        args: same,
        answer: as_is,
    },
    ByTool {
        method: methods::MEMORY_PURGE,
        tool: "memory_purge",
        args: purge,
        answer: as_is,
    },
    ByTool {
        method: methods::DOC_INSERT,
        tool: "doc_commit",
        args: doc,
        answer: |text| json!({"text": text}),
    },
    ByTool {
        method: methods::DOC_INSERT_WITH_MEDIA,
        tool: "doc_commit",
        args: doc,
        answer: |text| json!({"text": text}),
    },
    ByTool {
        method: methods::KNOWLEDGE_SEARCH,
        tool: "knowledge_search",
        args: with_hits,
        answer: |found| json!({"results": found["text"], "hits": found["hits"]}),
    },
    ByTool {
        method: methods::KNOWLEDGE_ADD,
        tool: "knowledge_create",
        args: same,
        answer: as_is,
    },
    ByTool {
        method: methods::KNOWLEDGE_LIST,
        tool: "knowledge_list",
        args: flat,
        answer: as_is,
    },
    ByTool {
        method: methods::SOCIAL_GET_PERSON,
        tool: "person_query",
        args: same,
        answer: as_is,
    },
    ByTool {
        method: methods::SOCIAL_GET_TRAIT,
        tool: "person_trait",
        args: same,
        answer: as_is,
    },
    ByTool {
        method: methods::SOCIAL_GET_RELATIONS,
        tool: "person_network",
        args: direct,
        answer: |links| json!({"relations": links}),
    },
    ByTool {
        method: methods::SOCIAL_GET_NETWORK,
        tool: "person_network",
        args: same,
        answer: |links| json!({"links": links}),
    },
    ByTool {
        method: methods::SOCIAL_LIST_PERSONS,
        tool: "person_list",
        args: same,
        answer: |people| json!({"persons": people}),
    },
];

/// The row serving `method`, if a tool serves it.
pub(crate) fn by_tool(method: &str) -> Option<&'static ByTool> {
    BY_TOOL.iter().find(|row| row.method == method)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_method_has_one_row_and_its_capability_is_not_core() {
        let mut seen = std::collections::HashSet::new();
        for row in BY_TOOL {
            assert!(seen.insert(row.method), "{} twice", row.method);
            let cap = hearth_rpc::capability::capability_of(row.method);
            assert!(
                cap.is_some_and(|c| c != hearth_rpc::capability::CORE),
                "{} must sit behind a capability, not core: {cap:?}",
                row.method
            );
        }
    }

    #[test]
    fn a_purge_is_flattened_and_never_loses_a_criterion() {
        let args = purge(
            "memory.purge",
            json!({"criteria": {"subject": "Ana", "subject_contains": "A"}, "mode": "hard"}),
        )
        .unwrap();
        // The unknown criterion is kept, so the tool refuses it instead of purging wider.
        assert_eq!(
            args,
            json!({"subject": "Ana", "subject_contains": "A", "mode": "hard"})
        );
        assert!(purge("memory.purge", json!({"criteria": "Ana"})).is_err());
    }

    #[test]
    fn a_doc_takes_its_media_from_wherever_the_plugin_put_them() {
        let beside = doc(
            "doc.insertWithMedia",
            json!({"doc": {"content": "x"}, "media": ["ab"]}),
        )
        .unwrap();
        assert_eq!(beside["media"], json!(["ab"]));
        let inside = doc(
            "doc.insert",
            json!({"doc": {"content": "x", "summary": "s", "media_digests": ["cd"]}}),
        )
        .unwrap();
        assert_eq!(
            inside,
            json!({"content": "x", "summary": "s", "media": ["cd"]})
        );
        assert!(doc("doc.insert", json!({"doc": {}})).is_err());
    }
}
