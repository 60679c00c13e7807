//! The report as JSON, for comparing runs and ablations by script.

use serde_json::{Value, json};

use super::{Measure, Report, System};

impl Report {
    /// Every measure at every k for both systems, per-category turn_any, latency and injected
    /// tokens, the configuration that ranked, and each question's ranks.
    pub fn to_json(&self) -> Value {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let mut recall = serde_json::Map::new();
        for system in [System::Hearth, System::Bm25] {
            let mut measures = serde_json::Map::new();
            for measure in Measure::ALL {
                for &k in &self.ks {
                    measures.insert(
                        format!("{}@{k}", measure.name()),
                        json!(self.recall_at(system, measure, k)),
                    );
                }
            }
            let name = match system {
                System::Hearth => "hearth",
                System::Bm25 => "bm25",
            };
            recall.insert(name.to_owned(), Value::Object(measures));
        }
        let tokens = self.inject_tokens();
        let c = &self.config;
        json!({
            "label": self.label,
            "name": self.name,
            "mode": self.mode,
            "corpora": self.corpora,
            "items": self.items,
            "questions": self.questions.len(),
            "skipped": self.skipped,
            "ks": self.ks,
            "recall": recall,
            "latency_ms": {
                "hearth": {"p50": ms(self.hearth_latency.p50), "p99": ms(self.hearth_latency.p99)},
                "bm25": {"p50": ms(self.bm25_latency.p50), "p99": ms(self.bm25_latency.p99)},
            },
            "inject": {
                "budget": self.memory_tokens,
                "tokens_p50": tokens.p50,
                "tokens_p95": tokens.p95,
                "tokens_max": tokens.max,
                "model_tokens": self.inject_model_tokens().map(|m| json!({
                    "p50": m.p50, "p95": m.p95, "max": m.max,
                })),
                "evidence": self.injected_evidence(),
            },
            "small_talk": {
                "inputs": self.small_talk.inputs,
                "items": self.small_talk.items,
                "inputs_with_items": self.small_talk.inputs_with_items,
                "items_without_rule": self.small_talk.items_without_rule,
                "inputs_with_items_without_rule": self.small_talk.inputs_with_items_without_rule,
            },
            "config": {
                "fusion": c.fusion.name(),
                "chance_margin": c.chance_margin,
                "rrf_k": c.rrf_k,
                "depth": c.depth,
                "dense_weight": c.dense_weight,
                "keyword_weight": c.keyword_weight,
                "companion_weight": c.companion_weight,
                "dense_relative_floor": c.dense_relative_floor,
                "recency_half_life_days": c.recency_half_life_days,
                "recency_floor": c.recency_floor,
                "time_window_boost": c.time_window_boost,
                "agent_words_weight": c.agent_words_weight,
                "user_words_weight": c.user_words_weight,
            },
            "per_question": self.questions.iter().map(|q| json!({
                "id": q.id,
                "category": q.category,
                "hearth_turn_any": q.hearth.turn_any,
                "bm25_turn_any": q.bm25.turn_any,
                "hearth_session_any": q.hearth.session_any,
                "inject_tokens": q.inject_tokens,
                    "inject_model_tokens": q.inject_model_tokens,
                "injected_evidence": q.injected_evidence,
            })).collect::<Vec<Value>>(),
        })
    }
}
