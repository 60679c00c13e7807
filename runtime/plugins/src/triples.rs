//! The original's `memory.commit {triples}`: facts a plugin tells the graph directly.
//!
//! A triple is `{subject, predicate, object, sentence?}` (`relation` is read for the
//! predicate too) or `[subject, predicate, object]`. Every triple is checked before any is
//! stored, so a malformed list stores nothing; each becomes the arguments of the kernel's
//! `memory_commit` tool.

use hearth_rpc::HandlerError;
use serde_json::{Value, json};

/// The most triples one call may carry.
pub const MAX_TRIPLES: usize = 64;

/// The `memory_commit` arguments of every triple in `triples`, or why the list is refused.
pub fn facts(method: &str, triples: &Value) -> Result<Vec<Value>, HandlerError> {
    let bad = |why: String| HandlerError::invalid_arguments(format!("{method}: {why}"));
    let list = triples
        .as_array()
        .ok_or_else(|| bad("triples must be a list".into()))?;
    if list.is_empty() {
        return Err(bad("triples is empty".into()));
    }
    if list.len() > MAX_TRIPLES {
        return Err(bad(format!(
            "{} triples, more than the {MAX_TRIPLES} one call may carry",
            list.len()
        )));
    }
    list.iter()
        .enumerate()
        .map(|(i, triple)| fact(triple).map_err(|why| bad(format!("triples[{i}]: {why}"))))
        .collect()
}

/// One triple as `memory_commit` arguments.
fn fact(triple: &Value) -> Result<Value, String> {
    let text = |v: &Value, name: &str| -> Result<String, String> {
        v.as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| format!("{name} must be a non-blank string"))
    };
    match triple {
        Value::Array(parts) if parts.len() == 3 => Ok(json!({
            "subject": text(&parts[0], "subject")?,
            "predicate": text(&parts[1], "predicate")?,
            "object": text(&parts[2], "object")?,
        })),
        Value::Object(map) => {
            let predicate = map.get("predicate").or_else(|| map.get("relation"));
            let mut args = json!({
                "subject": text(map.get("subject").unwrap_or(&Value::Null), "subject")?,
                "predicate": text(predicate.unwrap_or(&Value::Null), "predicate")?,
                "object": text(map.get("object").unwrap_or(&Value::Null), "object")?,
            });
            match map.get("sentence") {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => args["sentence"] = json!(s),
                Some(_) => return Err("sentence must be a string".into()),
            }
            Ok(args)
        }
        _ => Err(
            "a triple is {subject, predicate, object, sentence?} or [subject, predicate, object]"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_shapes_become_the_tools_arguments() {
        let got = facts(
            "memory.commit",
            &json!([
                {"subject": "Ana", "relation": "lives_in", "object": " Porto ", "sentence": "Ana lives in Porto."},
                ["Ben", "works_at", "Acme"],
            ]),
        )
        .unwrap();
        assert_eq!(
            got,
            [
                json!({"subject": "Ana", "predicate": "lives_in", "object": "Porto", "sentence": "Ana lives in Porto."}),
                json!({"subject": "Ben", "predicate": "works_at", "object": "Acme"}),
            ]
        );
    }

    #[test]
    fn one_bad_triple_refuses_the_list_and_names_it() {
        let refused = [
            (json!("Ana lives in Porto"), "must be a list"),
            (json!([]), "empty"),
            (json!([["Ana", "lives_in"]]), "triples[0]: a triple is"),
            (
                json!([["Ana", "lives_in", "Porto"], {"subject": "Ben", "object": "Acme"}]),
                "triples[1]: predicate",
            ),
            (
                json!([{"subject": " ", "predicate": "p", "object": "o"}]),
                "subject must be",
            ),
            (
                json!([{"subject": "a", "predicate": "p", "object": "o", "sentence": 3}]),
                "sentence must be",
            ),
            (
                json!(vec![json!(["a", "p", "o"]); MAX_TRIPLES + 1]),
                "more than the 64",
            ),
        ];
        for (triples, why) in refused {
            let err = facts("memory.commit", &triples).expect_err(&triples.to_string());
            assert!(err.to_string().contains(why), "{triples}: {err}");
        }
    }
}
