//! Situation fingerprints: the weighted features of one turn, and how alike two are.

use std::collections::{HashMap, HashSet};

use super::key::normalize_part;
use crate::GraphError;

/// Most features a fingerprint keeps (the heaviest, in order).
pub const MAX_FEATURES: usize = 24;
/// Most `topic:` features one turn contributes.
pub const MAX_TOPICS: usize = 3;

/// The feature kinds a declared key teaches its scene (a `kind:value` segment of one of these
/// kinds is a feature of that scene).
pub const LEARNED_KINDS: &[&str] = &["chan", "peer", "peer_group", "tool", "topic", "part"];

/// How much a feature of `kind` counts. Where the conversation happens and with whom weigh
/// most; a tool in use is a strong hint, a topic a weak one, the time of day weaker still.
/// Hearth differs from the original here: `peer_group` (a group conversation's partner) weighs
/// as much as `peer`, where the original left it out of its table and so gave it 0.4.
pub fn kind_weight(kind: &str) -> f64 {
    match kind {
        "chan" | "peer" | "peer_group" => 1.0,
        "tool" => 0.8,
        "part" => 0.2,
        _ => 0.4,
    }
}

/// One weighted feature of a situation: `kind:value`, both normalised, weighed by its kind.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneFeature {
    key: String,
    weight: f64,
}

impl SceneFeature {
    /// The feature `norm(kind):norm(value)`, weighed by [`kind_weight`]. A kind or value with
    /// nothing left after normalisation is [`GraphError::InvalidSceneKey`].
    pub fn new(kind: &str, value: &str) -> Result<SceneFeature, GraphError> {
        let (k, v) = (normalize_part(kind), normalize_part(value));
        if k.is_empty() || v.is_empty() {
            return Err(GraphError::InvalidSceneKey {
                key: format!("{kind}:{value}"),
            });
        }
        Ok(SceneFeature {
            weight: kind_weight(&k),
            key: format!("{k}:{v}"),
        })
    }

    /// A feature as stored: its key and the weight it was stored with.
    pub(crate) fn stored(key: String, weight: f64) -> SceneFeature {
        SceneFeature { key, weight }
    }

    /// `kind:value`.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Its weight.
    pub fn weight(&self) -> f64 {
        self.weight
    }
}

/// Who a turn is with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer<'a> {
    /// A direct conversation partner's id (`peer:`).
    Direct(&'a str),
    /// A group conversation's id (`peer_group:`).
    Group(&'a str),
}

/// What the caller knows about one turn, for [`turn_features`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TurnSituation<'a> {
    /// The channel the turn came from (`chan:`).
    pub source: &'a str,
    /// Who it is with, when known.
    pub peer: Option<Peer<'a>>,
    /// The local hour (0–23; larger values are taken modulo 24) it happened at (`part:`).
    pub local_hour: u8,
    /// Tools used in the turn (`tool:` each).
    pub tools: &'a [&'a str],
    /// Keywords of the turn, most telling first; the first [`MAX_TOPICS`] distinct ones become
    /// `topic:` features. [`topic_keywords`] extracts them from text.
    pub keywords: &'a [&'a str],
}

/// The part of the day an hour falls in: night before 6, morning before 12, afternoon before
/// 18, evening after.
pub fn part_of_day(local_hour: u8) -> &'static str {
    match local_hour % 24 {
        0..6 => "night",
        6..12 => "morning",
        12..18 => "afternoon",
        _ => "evening",
    }
}

/// One turn's fingerprint: `chan:`, the peer (`peer:` or `peer_group:`), `part:` of the day,
/// `tool:` per tool, up to [`MAX_TOPICS`] `topic:` keywords; deduplicated, heaviest first
/// (stable), at most [`MAX_FEATURES`]. Pure; a part with nothing left after normalisation (an
/// empty source, a keyword of punctuation) is left out rather than failing the turn.
pub fn turn_features(turn: &TurnSituation<'_>) -> Vec<SceneFeature> {
    let mut features = Vec::new();
    features.extend(SceneFeature::new("chan", turn.source).ok());
    features.extend(turn.peer.and_then(|peer| match peer {
        Peer::Direct(id) => SceneFeature::new("peer", id).ok(),
        Peer::Group(id) => SceneFeature::new("peer_group", id).ok(),
    }));
    features.extend(SceneFeature::new("part", part_of_day(turn.local_hour)).ok());
    features.extend(
        turn.tools
            .iter()
            .filter_map(|t| SceneFeature::new("tool", t).ok()),
    );
    let mut topics = HashSet::new();
    features.extend(
        turn.keywords
            .iter()
            .filter_map(|k| SceneFeature::new("topic", k).ok())
            .filter(|f| topics.insert(f.key.clone()))
            .take(MAX_TOPICS),
    );
    fingerprint(features)
}

/// `features` as a fingerprint: the first of each key kept, sorted heaviest first (stable, so
/// equal weights keep the caller's order), at most [`MAX_FEATURES`].
pub fn fingerprint(features: impl IntoIterator<Item = SceneFeature>) -> Vec<SceneFeature> {
    let mut seen = HashSet::new();
    let mut out: Vec<SceneFeature> = features
        .into_iter()
        .filter(|f| seen.insert(f.key.clone()))
        .collect();
    out.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    out.truncate(MAX_FEATURES);
    out
}

/// Weighted Jaccard similarity of two fingerprints: Σ min(wₐ, w_b) over shared features ÷
/// (Σ max(wₐ, w_b) over shared features + Σ w of the features on one side only). 0 when both
/// are empty. A key repeated within one side counts once, at its largest weight.
pub fn scene_similarity(a: &[SceneFeature], b: &[SceneFeature]) -> f64 {
    // Summed in the sides' own order, not a hash map's, so the same fingerprints give the same
    // bits every time: a similarity right at a threshold must not flip between runs.
    let (a, b) = (by_key(a), by_key(b));
    let lookup =
        |side: &[(&str, f64)], key: &str| side.iter().find(|(k, _)| *k == key).map(|&(_, w)| w);
    let (mut shared_min, mut rest) = (0.0, 0.0);
    for &(key, wa) in &a {
        match lookup(&b, key) {
            Some(wb) => {
                shared_min += wa.min(wb);
                rest += wa.max(wb);
            }
            None => rest += wa,
        }
    }
    for &(key, wb) in &b {
        if lookup(&a, key).is_none() {
            rest += wb;
        }
    }
    if rest > 0.0 { shared_min / rest } else { 0.0 }
}

/// Each key of `features` once, at its largest weight, in the order first seen.
fn by_key(features: &[SceneFeature]) -> Vec<(&str, f64)> {
    let mut out: Vec<(&str, f64)> = Vec::with_capacity(features.len());
    for f in features {
        match out.iter_mut().find(|(k, _)| *k == f.key) {
            Some((_, w)) => *w = w.max(f.weight),
            None => out.push((&f.key, f.weight)),
        }
    }
    out
}

/// Up to [`MAX_TOPICS`] keywords of `text` for [`TurnSituation::keywords`]: its jieba words
/// (stop words left out), the most frequent first and, among equals, the first said first.
pub fn topic_keywords(text: &str) -> Vec<String> {
    let words = hearth_memory::tokens::tokenize(text);
    let mut counts: HashMap<&str, (usize, usize)> = HashMap::new();
    for (at, word) in words.iter().enumerate() {
        // Single Latin letters and digits say nothing about a topic.
        if word.chars().count() < 2 && word.is_ascii() {
            continue;
        }
        counts.entry(word).or_insert((0, at)).0 += 1;
    }
    let mut ranked: Vec<(&str, (usize, usize))> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
    ranked
        .into_iter()
        .take(MAX_TOPICS)
        .map(|(w, _)| w.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(kind: &str, value: &str) -> SceneFeature {
        SceneFeature::new(kind, value).unwrap()
    }

    #[test]
    fn kinds_weigh_as_the_table_says() {
        for (kind, w) in [
            ("chan", 1.0),
            ("peer", 1.0),
            ("peer_group", 1.0),
            ("tool", 0.8),
            ("topic", 0.4),
            ("part", 0.2),
            ("mood", 0.4),
        ] {
            assert_eq!(kind_weight(kind), w, "{kind}");
            assert_eq!(f(kind, "x").weight(), w, "{kind}");
        }
        assert_eq!(f(" Peer Group ", "Ana B").key(), "peer_group:ana_b");
        assert!(SceneFeature::new("chan", "  ").is_err());
        assert!(SceneFeature::new("!!", "x").is_err());
    }

    #[test]
    fn hours_fall_in_their_part_of_the_day() {
        let parts: Vec<&str> = [0, 5, 6, 11, 12, 17, 18, 23, 24, 30]
            .iter()
            .map(|&h| part_of_day(h))
            .collect();
        assert_eq!(
            parts,
            [
                "night",
                "night",
                "morning",
                "morning",
                "afternoon",
                "afternoon",
                "evening",
                "evening",
                "night",
                "morning"
            ]
        );
    }

    #[test]
    fn a_turn_gives_its_features_heaviest_first_deduplicated_and_capped() {
        let tools = ["web_search", "Web Search", "calc"];
        let keywords = ["rust", "Rust", "sqlite", "!!!", "jieba", "fourth"];
        let turn = TurnSituation {
            source: "Telegram",
            peer: Some(Peer::Group("Family")),
            local_hour: 20,
            tools: &tools,
            keywords: &keywords,
        };
        let keys: Vec<String> = turn_features(&turn)
            .iter()
            .map(|f| f.key().to_owned())
            .collect();
        assert_eq!(
            keys,
            [
                "chan:telegram",
                "peer_group:family",
                "tool:web_search",
                "tool:calc",
                "topic:rust",
                "topic:sqlite",
                "topic:jieba",
                "part:evening",
            ]
        );
        let many: Vec<String> = (0..40).map(|i| format!("t{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let busy = TurnSituation {
            source: "web",
            tools: &many,
            ..TurnSituation::default()
        };
        let features = turn_features(&busy);
        assert_eq!(features.len(), MAX_FEATURES);
        assert_eq!(features[0].key(), "chan:web");
        assert!(
            features.iter().all(|f| f.key() != "part:night"),
            "the lightest go first"
        );
    }

    #[test]
    fn similarity_is_the_weighted_jaccard_of_the_two_sides() {
        let a = [f("chan", "web"), f("peer", "ana"), f("tool", "calc")];
        let b = [f("chan", "web"), f("topic", "rust")];
        // shared: chan 1.0; a only: peer 1.0 + tool 0.8; b only: topic 0.4.
        assert!((scene_similarity(&a, &b) - 1.0 / 3.2).abs() < 1e-12);
        assert_eq!(scene_similarity(&a, &a), 1.0);
        assert_eq!(scene_similarity(&a, &[]), 0.0);
        assert_eq!(scene_similarity(&[], &[]), 0.0);
        // Unequal weights of one key: min over max.
        let heavy = [SceneFeature::stored("x:y".into(), 1.0)];
        let light = [SceneFeature::stored("x:y".into(), 0.25)];
        assert_eq!(scene_similarity(&heavy, &light), 0.25);
        // chan + part shared (1.2) over chan, part, peer (2.2).
        let c = [f("chan", "web"), f("part", "night")];
        let d = [f("chan", "web"), f("part", "night"), f("peer", "bo")];
        assert!((scene_similarity(&c, &d) - 1.2 / 2.2).abs() < 1e-12);
    }

    #[test]
    fn topic_keywords_are_the_most_frequent_words() {
        let words = topic_keywords("Rust rust rust SQLite sqlite graph database");
        assert_eq!(words, ["rust", "sqlite", "graph"]);
        assert!(topic_keywords("").is_empty());
    }
}
