//! The memory tools the model can call (SPEC §8.2, with Hearth's cold context): recall by
//! meaning and keywords (`coldcontext_query`, and `doc_query` for prompts written for the
//! original), and `doc_commit` to store a note. Recall never deletes (DESIGN §4.2).
//!
//! The graph tools (`memory_recall`, `memory_forget`, `memory_why`, `memory_commit`,
//! `memory_edit`, `memory_merge`, `memory_purge`, `memory_introspect`) work on the L3 facts; ids are `r<n>` (a
//! relation) and `e<n>` (a dated event), as `memory_recall` returns them. The social tools
//! (`person_query`, `person_set_trait`, `person_relate`, `person_network`) are the same graph
//! seen by person, with `person_trait` and `person_list`.

use crate::entry_ref::EntryRef;
use crate::graph_service::GraphRequest;
use crate::kernel_tool::{self, KernelTool};
use crate::memory_service::MemoryService;
use hearth_stages::{CallContext, HandlerError, ToolDef, ToolRegistry};
use serde_json::{Value, json};

const DEFAULT_TOP_K: u64 = 3;
/// Recent turns `memory_recall` lists beside the facts and memories: the few a person may mean
/// by "what I just said".
const RECENT_TURNS: usize = 3;

/// Registers the memory tools (`coldcontext_query`, `doc_commit`) over `memory`.
pub fn register(tools: &ToolRegistry, memory: &MemoryService) {
    let query_params = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for, in any words"},
            "top_k": {"type": "integer", "description": "How many memories (default 3)"}
        },
        "required": ["query"]
    });
    for (name, description) in [
        (
            "coldcontext_query",
            "Search long-term memory (past conversations moved out of the working context) by meaning and keywords; found items come back into context at their original time.",
        ),
        (
            "doc_query",
            "Same as coldcontext_query: search long-term memory.",
        ),
    ] {
        let m = memory.clone();
        let def = ToolDef {
            name: name.into(),
            plugin: "memory".into(),
            description: description.into(),
            parameters: query_params.clone(),
            no_memory: true,
            parallel_safe: true,
            ..ToolDef::default()
        };
        let registered = tools.register(def, move |call: &CallContext, args: &Value| {
            let query = args["query"]
                .as_str()
                .unwrap_or_default()
                .trim()
                .to_string();
            if query.is_empty() {
                return Err(HandlerError::InvalidArguments("`query` is required".into()));
            }
            let k = args["top_k"].as_u64().unwrap_or(DEFAULT_TOP_K).clamp(1, 20) as usize;
            call.check()?;
            m.query(query, k)
                .map(Value::String)
                .map_err(HandlerError::from)
        });
        if let Err(e) = registered {
            tracing::error!("memory tool {name}: {e}");
        }
    }
    let m = memory.clone();
    let def = ToolDef {
        name: "doc_commit".into(),
        plugin: "memory".into(),
        description: "Store a note in long-term memory (for facts worth keeping).".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "content": {"type": "string"},
                "summary": {"type": "string", "description": "Short title (default: the start of the content)"},
                "media": {"type": "array", "items": {"type": "string"},
                          "description": "Images or files to keep with the note, by the sha256 their [image …] line shows"}
            },
            "required": ["content"]
        }),
        no_memory: true,
        ..ToolDef::default()
    };
    let registered = tools.register(def, move |call: &CallContext, args: &Value| {
        let content = args["content"].as_str().unwrap_or_default().to_string();
        let summary = args["summary"].as_str().unwrap_or_default().to_string();
        let media = media_arg(args)?;
        call.check()?;
        m.commit(content, summary, media)
            .map(Value::String)
            .map_err(HandlerError::from)
    });
    if let Err(e) = registered {
        tracing::error!("memory tool doc_commit: {e}");
    }
    // Without a graph they could only answer that there is none, and every schema is prefill.
    if memory.has_graph() {
        register_graph_tools(tools, memory);
    }
}

/// The `media` argument of `doc_commit` and `memory_commit`: digests, or the prefixes the
/// markers show (none when absent).
fn media_arg(args: &Value) -> Result<Vec<String>, HandlerError> {
    let not_a_list = || HandlerError::InvalidArguments("`media` is a list of digests".into());
    match &args["media"] {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .ok_or_else(not_a_list),
        _ => Err(not_a_list()),
    }
}

/// The memory tools whose results show the model facts by id: what the model read there, its
/// reply may repeat, so a forgotten fact's value leaves that reply too.
pub(crate) const SHOWS_FACTS: &[&str] = &[
    "memory_recall",
    "memory_why",
    "person_query",
    "person_network",
];

/// The most facts one graph recall brings to a caller that reads them all (the model's
/// `memory_recall`, a plugin's `memory.recall`).
pub const MAX_RECALLED_FACTS: usize = 20;

/// A string argument, trimmed; `None` when absent or blank.
fn arg(args: &Value, name: &str) -> Option<String> {
    args[name]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn required(args: &Value, name: &str) -> Result<String, HandlerError> {
    kernel_tool::required_str(args, name).map(|s| s.trim().to_owned())
}

type GraphArgs = fn(&Value) -> Result<GraphRequest, HandlerError>;

/// What a purge's arguments may name.
const PURGE_KEYS: [&str; 5] = ["subject", "predicate", "object", "cold_item", "mode"];

/// A purge from its arguments: `subject`, `predicate`, `object`, `cold_item` and `mode`
/// (`soft`, the default, or `hard`). Any other key is refused, never ignored: a criterion
/// dropped would widen the purge.
fn purge_request(args: &Value) -> Result<GraphRequest, HandlerError> {
    let Some(map) = args.as_object() else {
        return Err(HandlerError::InvalidArguments(
            "purge criteria are an object".into(),
        ));
    };
    if let Some(key) = map.keys().find(|k| !PURGE_KEYS.contains(&k.as_str())) {
        return Err(HandlerError::InvalidArguments(format!(
            "purge: unknown criterion {key:?} (known: {})",
            PURGE_KEYS.join(", ")
        )));
    }
    let hard = match args["mode"].as_str().unwrap_or("soft") {
        "soft" => false,
        "hard" => true,
        other => {
            return Err(HandlerError::InvalidArguments(format!(
                "purge: mode {other:?} is not soft or hard"
            )));
        }
    };
    let cold_item = match &args["cold_item"] {
        Value::Null => None,
        v => Some(v.as_i64().ok_or_else(|| {
            HandlerError::InvalidArguments("purge: cold_item is an integer id".into())
        })?),
    };
    let criteria = hearth_graph::PurgeCriteria {
        subject: arg(args, "subject"),
        predicate: arg(args, "predicate"),
        object: arg(args, "object"),
        cold_item,
    };
    Ok(GraphRequest::Purge { criteria, hard })
}

fn id_param(what: &str) -> Value {
    json!({"type": "string", "description": format!("The fact's id as memory_recall gave it (r12, e3): {what}")})
}

fn register_graph_tools(tools: &ToolRegistry, memory: &MemoryService) {
    let specs: [(&str, &str, Value, GraphArgs, bool); 13] = [
        (
            "memory_forget",
            "Forget a remembered fact by its id (r12, e3), or a remembered turn (c45, or w12 for one said recently, this very message included) with the facts only it told; says what was removed (a turn still being answered goes as soon as the answer is in: when_answered). It never comes back from the same conversation.",
            json!({"type": "object", "properties": {"id": {"type": "string", "description": "The id as memory_recall gave it: a fact (r12, e3) or a turn (c45, w12)"}}, "required": ["id"]}),
            |a| {
                Ok(GraphRequest::Forget {
                    id: required(a, "id")?,
                })
            },
            false,
        ),
        (
            "memory_why",
            "Why a fact is believed: the sentences and turns it came from.",
            json!({"type": "object", "properties": {"id": id_param("the fact to explain")}, "required": ["id"]}),
            |a| {
                Ok(GraphRequest::Why {
                    id: required(a, "id")?,
                })
            },
            true,
        ),
        (
            "memory_commit",
            "Remember a fact as subject, predicate, object (predicate like lives_in, works_at, likes).",
            json!({"type": "object", "properties": {
                "subject": {"type": "string", "description": "Who or what (\"user\" for the user)"},
                "predicate": {"type": "string", "description": "lower-case identifier, e.g. lives_in"},
                "object": {"type": "string"},
                "sentence": {"type": "string", "description": "The words it was said in"},
                "media": {"type": "array", "items": {"type": "string"},
                          "description": "Images or files the fact is about, by the sha256 their [image …] line shows"}
            }, "required": ["subject", "predicate", "object"]}),
            |a| {
                Ok(GraphRequest::Commit {
                    subject: required(a, "subject")?,
                    predicate: required(a, "predicate")?,
                    object: required(a, "object")?,
                    sentence: arg(a, "sentence").unwrap_or_default(),
                    media: media_arg(a)?,
                })
            },
            false,
        ),
        (
            "memory_edit",
            "Correct the value of a remembered fact by its id; the old value is kept as superseded history.",
            json!({"type": "object", "properties": {
                "id": id_param("the fact to correct"),
                "object": {"type": "string", "description": "The right value"},
                "sentence": {"type": "string", "description": "Why (the user's words)"}
            }, "required": ["id", "object"]}),
            |a| {
                Ok(GraphRequest::Edit {
                    id: required(a, "id")?,
                    object: required(a, "object")?,
                    sentence: arg(a, "sentence").unwrap_or_default(),
                })
            },
            false,
        ),
        (
            "memory_introspect",
            "What long-term memory holds: fact counts, distillation progress.",
            json!({"type": "object", "properties": {}}),
            |_| Ok(GraphRequest::Stats),
            true,
        ),
        (
            "memory_merge",
            "Merge two names of the same person or thing (the first becomes an alias of the second), or with keep_apart say they are different and stop proposing them.",
            json!({"type": "object", "properties": {
                "source": {"type": "string", "description": "The name that goes"},
                "target": {"type": "string", "description": "The name that stays"},
                "keep_apart": {"type": "boolean", "description": "They are different: do not merge (default false)"}
            }, "required": ["source", "target"]}),
            |a| {
                Ok(GraphRequest::Merge {
                    source: required(a, "source")?,
                    target: required(a, "target")?,
                    keep_apart: a["keep_apart"].as_bool().unwrap_or(false),
                })
            },
            false,
        ),
        (
            "memory_purge",
            "Remove every remembered fact matching all the given criteria (e.g. everything the user likes). mode soft (default) ends them, kept as past history; hard forgets them for good. A criterion that matches nothing refuses the whole purge.",
            json!({"type": "object", "properties": {
                "subject": {"type": "string", "description": "Whose facts, by name (\"user\" for the user)"},
                "predicate": {"type": "string", "description": "Which relation, exactly, e.g. likes"},
                "object": {"type": "string", "description": "Facts about this value, by name"},
                "cold_item": {"type": "integer", "description": "Facts distilled from this long-term memory entry (its id)"},
                "mode": {"type": "string", "enum": ["soft", "hard"], "description": "soft (default) or hard"}
            }}),
            purge_request,
            false,
        ),
        (
            "person_query",
            "Everything remembered about a person (\"me\" for the user): traits and relations, current and past, with the sentences they came from.",
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
            |a| {
                Ok(GraphRequest::Person {
                    name: required(a, "name")?,
                })
            },
            true,
        ),
        (
            "person_trait",
            "One trait of a person (\"me\" for the user): its value now and the values before, with the sentences they came from.",
            json!({"type": "object", "properties": {
                "name": {"type": "string"},
                "trait": {"type": "string", "description": "In English words, e.g. favourite colour"}
            }, "required": ["name", "trait"]}),
            |a| {
                Ok(GraphRequest::Trait {
                    name: required(a, "name")?,
                    trait_words: required(a, "trait")?,
                })
            },
            true,
        ),
        (
            "person_list",
            "The people remembered, most talked about first.",
            json!({"type": "object", "properties": {
                "limit": {"type": "integer", "description": "How many (default 50, at most 500)"}
            }}),
            |a| {
                Ok(GraphRequest::People {
                    limit: a["limit"].as_u64().unwrap_or(50).clamp(1, 500) as usize,
                })
            },
            true,
        ),
        (
            "person_set_trait",
            "Remember a person's trait (birthday, favourite colour, job); a new value replaces the old one, which is kept as history.",
            json!({"type": "object", "properties": {
                "name": {"type": "string", "description": "Whose (\"me\" for the user)"},
                "trait": {"type": "string", "description": "In English words, e.g. favourite colour"},
                "value": {"type": "string"},
                "sentence": {"type": "string", "description": "The words it was said in"}
            }, "required": ["name", "trait", "value"]}),
            |a| {
                Ok(GraphRequest::SetTrait {
                    name: required(a, "name")?,
                    trait_words: required(a, "trait")?,
                    value: required(a, "value")?,
                    sentence: arg(a, "sentence").unwrap_or_default(),
                })
            },
            false,
        ),
        (
            "person_relate",
            "Remember how two people are related: person_a <relation> person_b (e.g. Ana, sister of, Rui).",
            json!({"type": "object", "properties": {
                "person_a": {"type": "string", "description": "\"me\" for the user"},
                "relation": {"type": "string", "description": "In English words, e.g. sister of, works with"},
                "person_b": {"type": "string"},
                "sentence": {"type": "string", "description": "The words it was said in"}
            }, "required": ["person_a", "relation", "person_b"]}),
            |a| {
                Ok(GraphRequest::Relate {
                    a: required(a, "person_a")?,
                    relation: required(a, "relation")?,
                    b: required(a, "person_b")?,
                    sentence: arg(a, "sentence").unwrap_or_default(),
                })
            },
            false,
        ),
        (
            "person_network",
            "The people connected to a person and how, up to depth steps away (default 2, at most 3).",
            json!({"type": "object", "properties": {
                "name": {"type": "string"},
                "depth": {"type": "integer", "description": "Steps away (1-3, default 2)"}
            }, "required": ["name"]}),
            |a| {
                Ok(GraphRequest::Network {
                    name: required(a, "name")?,
                    depth: a["depth"].as_u64().unwrap_or(2).clamp(1, 3) as u8,
                })
            },
            true,
        ),
    ];
    for (name, description, parameters, parse, parallel_safe) in specs {
        let m = memory.clone();
        let tool = KernelTool {
            plugin: "memory",
            name,
            description,
            parameters,
            parallel_safe,
        };
        kernel_tool::register(tools, tool, move |call, args| {
            // A turn by its id is the memory store's to forget, not the graph's.
            if name == "memory_forget"
                && let Some(entry) = args["id"].as_str().and_then(EntryRef::parse)
            {
                return m
                    .forget_named(entry, "the model, at the user's request")
                    .map_err(HandlerError::from);
            }
            m.graph_in_turn(parse(args)?, &call.caller().turn)
                .map_err(HandlerError::from)
        });
    }
    let m = memory.clone();
    let def = ToolDef {
        name: "memory_recall".into(),
        plugin: "memory".into(),
        description: "Recall remembered facts (current and past, with the sentence each came from and its id), turns said recently and past conversations, each with its id.".into(),
        parameters: json!({"type": "object", "properties": {
            "query": {"type": "string", "description": "What to look for, in any words"},
            "top_k": {"type": "integer", "description": "How many facts (default 5)"}
        }, "required": ["query"]}),
        no_memory: true,
        parallel_safe: true,
        ..ToolDef::default()
    };
    // Built in, so always offered: the one memory tool a model must know without searching.
    let owner = hearth_stages::ToolOwner::builtin();
    let capability = hearth_stages::DEFAULT_CAPABILITY;
    let registered = tools.register_owned(
        def,
        owner,
        capability,
        move |call: &CallContext, args: &Value| {
            let query = required(args, "query")?;
            let k = args["top_k"]
                .as_u64()
                .unwrap_or(5)
                .clamp(1, MAX_RECALLED_FACTS as u64) as usize;
            call.check()?;
            let facts = m
                .graph(GraphRequest::Recall {
                    query: query.clone(),
                    k,
                    for_model: true,
                })
                // Without L3 the conversations are still searched.
                .unwrap_or_else(|unavailable| json!({ "unavailable": unavailable.to_string() }));
            // What was said recently, not yet among the memories: found by its words, with the
            // id that forgets it.
            let recent: Vec<Value> = m
                .search_window(query.clone(), RECENT_TURNS)
                .map_err(HandlerError::from)?
                .into_iter()
                .map(|hit| json!({"id": EntryRef::Window(hit.id).to_string(), "text": hit.text}))
                .collect();
            let memories = m
                .query(query, DEFAULT_TOP_K as usize)
                .map_err(HandlerError::from)?;
            Ok(json!({"facts": facts, "recent": recent, "memories": memories}))
        },
    );
    if let Err(e) = registered {
        tracing::error!("memory tool memory_recall: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_purge_refuses_what_it_does_not_know_rather_than_dropping_it() {
        for (args, says) in [
            (json!({"subject_contains": "Ana"}), "subject_contains"),
            (json!({"subject": "Ana", "mode": "supersede"}), "supersede"),
            (json!({"cold_item": "seven"}), "cold_item"),
            (json!(["Ana"]), "object"),
        ] {
            match purge_request(&args) {
                Err(HandlerError::InvalidArguments(m)) => assert!(m.contains(says), "{m}"),
                other => panic!("{args}: {other:?}"),
            }
        }
        let Ok(GraphRequest::Purge { criteria, hard }) =
            purge_request(&json!({"subject": " Ana ", "cold_item": 7, "mode": "hard"}))
        else {
            panic!("a valid purge")
        };
        assert!(hard);
        assert_eq!(criteria.subject.as_deref(), Some("Ana"));
        assert_eq!(criteria.cold_item, Some(7));
        assert!(criteria.predicate.is_none() && criteria.object.is_none());
        let Ok(GraphRequest::Purge { hard, .. }) = purge_request(&json!({"predicate": "likes"}))
        else {
            panic!("soft by default")
        };
        assert!(!hard);
    }
}
