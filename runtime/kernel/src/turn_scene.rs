//! What the kernel knows of a turn's situation when its memory pass runs: the turn id its cold
//! entries will carry, the channel it came through, who it is with, and the scenes its payload
//! declares. The store's owner turns it into scene features, enters the scenes once and notes
//! them for the turn (see [`crate::graph_service`]).
//!
//! Read from the input alone, on the kernel's worker: no model, no SQLite, no tokenizer (the
//! topic keywords of the text are taken on the store's thread).

use crate::input::InputEvent;
use hearth_scheduler::CRITICAL_CHANNEL;
use serde_json::{Map, Value};

/// Payload fields naming who a turn is with, in the order the first present one is taken
/// (SPEC §5.6); `group_id` names a group conversation, the others a direct partner.
pub const PEER_FIELDS: [&str; 5] = ["peer", "peer_id", "group_id", "user_id", "chat_id"];

/// Who a turn is with, read from its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScenePeer {
    /// A direct partner (`peer:`).
    Direct(String),
    /// A group conversation (`peer_group:`).
    Group(String),
}

/// A turn's situation as the memory pass needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TurnScene {
    /// The id the turn's context events carry, and so the `turn_id` of the cold items
    /// distilled from them ([`crate::model_distill::cold_item`]): the input's request id.
    pub turn_id: String,
    /// The channel the input came from (`chan:` feature, and the declared `chan:<source>`
    /// scene).
    pub source: String,
    /// Who the turn is with.
    pub peer: Option<ScenePeer>,
    /// The scenes `payload.scene` declares (a string or a list of strings), as given: keys
    /// that normalise to nothing are dropped when the scene is entered.
    pub declared: Vec<String>,
}

impl TurnScene {
    /// The situation of `input`, or `None` when the turn has no scene: `scene_policy: "none"`
    /// in its payload, or a consolidation task (the kernel's own `_consolidation_` channel).
    pub fn of_input(input: &InputEvent) -> Option<TurnScene> {
        if input.str_field("scene_policy") == Some("none")
            || input.source == CRITICAL_CHANNEL
            || input.output_channel == CRITICAL_CHANNEL
        {
            return None;
        }
        Some(TurnScene {
            turn_id: input.request_id.clone(),
            source: input.source.clone(),
            peer: peer_of(&input.payload),
            declared: declared_of(&input.payload),
        })
    }
}

/// The first of [`PEER_FIELDS`] present in `payload` with a usable value: a non-blank string,
/// or a number written without a decimal point (`12345`, a float rounded: `12345.0` → `12345`).
/// A field with another kind of value (null, a list) is passed over.
pub fn peer_of(payload: &Map<String, Value>) -> Option<ScenePeer> {
    PEER_FIELDS.iter().find_map(|field| {
        let id = match payload.get(*field)? {
            Value::String(s) if !s.trim().is_empty() => s.trim().to_owned(),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => i.to_string(),
                (_, Some(u), _) => u.to_string(),
                (_, _, Some(f)) if f.is_finite() => format!("{f:.0}"),
                _ => return None,
            },
            _ => return None,
        };
        Some(if *field == "group_id" {
            ScenePeer::Group(id)
        } else {
            ScenePeer::Direct(id)
        })
    })
}

/// `payload.scene`: a string, or the strings of a list (other items are logged at debug and
/// left out).
pub fn declared_of(payload: &Map<String, Value>) -> Vec<String> {
    match payload.get("scene") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(s) => Some(s.clone()),
                other => {
                    tracing::debug!(%other, "payload.scene: an item that is not a string, ignored");
                    None
                }
            })
            .collect(),
        Some(other) => {
            tracing::debug!(%other, "payload.scene is neither a string nor a list, ignored");
            Vec::new()
        }
    }
}

/// The local hour (0–23) of `now_ms` at `utc_offset_secs` east of UTC.
pub fn local_hour(now_ms: i64, utc_offset_secs: i64) -> u8 {
    let secs = now_ms.div_euclid(1_000).saturating_add(utc_offset_secs);
    (secs.rem_euclid(86_400) / 3_600) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn payload(v: Value) -> Map<String, Value> {
        v.as_object().expect("an object").clone()
    }

    #[test]
    fn the_first_present_peer_field_names_the_partner_and_group_id_a_group() {
        let p = payload(json!({"chat_id": 7, "user_id": "ana", "content": "hi"}));
        assert_eq!(peer_of(&p), Some(ScenePeer::Direct("ana".into())));
        let p = payload(json!({"group_id": 123456789012_u64, "chat_id": "x"}));
        assert_eq!(peer_of(&p), Some(ScenePeer::Group("123456789012".into())));
        let p = payload(json!({"peer_id": 42.0}));
        assert_eq!(peer_of(&p), Some(ScenePeer::Direct("42".into())));
        let p = payload(json!({"peer": null, "peer_id": "  ", "chat_id": -5}));
        assert_eq!(peer_of(&p), Some(ScenePeer::Direct("-5".into())));
        assert_eq!(peer_of(&payload(json!({"content": "hi"}))), None);
    }

    #[test]
    fn declared_scenes_are_a_string_or_the_strings_of_a_list() {
        assert_eq!(
            declared_of(&payload(json!({"scene": "project:x"}))),
            ["project:x"]
        );
        assert_eq!(
            declared_of(&payload(json!({"scene": ["a", 3, "b"]}))),
            ["a", "b"]
        );
        assert!(declared_of(&payload(json!({"scene": {"k": 1}}))).is_empty());
        assert!(declared_of(&payload(json!({}))).is_empty());
    }

    #[test]
    fn scene_policy_none_and_consolidation_tasks_have_no_scene() {
        let input = InputEvent::text("telegram", "hi").with_payload("scene_policy", json!("none"));
        assert_eq!(TurnScene::of_input(&input), None);
        let input = InputEvent::text(CRITICAL_CHANNEL, "distill");
        assert_eq!(TurnScene::of_input(&input), None);
        let input = InputEvent::text("telegram", "hi").with_payload("scene", json!("work"));
        let scene = TurnScene::of_input(&input).expect("a scene");
        assert_eq!(scene.turn_id, input.request_id);
        assert_eq!(
            (scene.source.as_str(), scene.declared),
            ("telegram", vec!["work".to_string()])
        );
    }

    #[test]
    fn the_local_hour_follows_the_offset() {
        // 1_780_000_000 s is 20:26:40 UTC.
        assert_eq!(local_hour(1_780_000_000_000, 0), 20);
        assert_eq!(local_hour(1_780_000_000_000, 8 * 3_600), 4);
        assert_eq!(local_hour(1_780_000_000_000, -21 * 3_600), 23);
        assert_eq!(local_hour(-1, 0), 23);
    }
}
