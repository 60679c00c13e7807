//! Helpers shared by the cold context tests: a small deterministic embedder (a bag of concepts),
//! so expected rankings can be worked out by hand, and a companion model of another space.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::{ContextEvent, EmbedError, Embedder, Fingerprint, Pooling};

pub(super) const HOUR_MS: i64 = 60 * 60 * 1000;

/// When the tests that do not care about time ask: just after their entries, the same day.
pub(super) const ASKED: i64 = 20_000;

pub(super) use crate::test_support::TempDir;

/// Concepts of the test embedder: a text's vector counts the words of each concept it uses.
const CONCEPTS: &[&[&str]] = &[
    &["cat", "kitten", "pet", "猫"],
    &["trip", "travel", "flight", "旅行"],
    &["pizza", "dinner", "food", "吃"],
    &["job", "office", "work", "工作"],
    &["piano", "music", "song", "钢琴"],
    &["rain", "weather", "sunny", "天气"],
    &["car", "parking", "garage", "车"],
    &["book", "novel", "read", "书"],
];

/// A deterministic "dense model": one dimension per concept, plus a constant dimension so no
/// text maps to the zero vector.
pub(super) struct ConceptEmbedder {
    fingerprint: Fingerprint,
}

impl ConceptEmbedder {
    pub(super) fn new(sha: &str) -> Self {
        Self {
            fingerprint: Fingerprint::new("concepts", sha, CONCEPTS.len() + 1, Pooling::Mean)
                .expect("valid fingerprint"),
        }
    }

    pub(super) fn vector(text: &str) -> Vec<f32> {
        let lower = text.to_lowercase();
        let mut v: Vec<f32> = CONCEPTS
            .iter()
            .map(|words| words.iter().filter(|w| lower.contains(*w)).count() as f32)
            .collect();
        v.push(0.1);
        crate::l2_normalize(&mut v);
        v
    }
}

impl Embedder for ConceptEmbedder {
    fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        CONCEPTS.len() + 1
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| Self::vector(t)).collect())
    }
}

/// A model that embeds as [`ConceptEmbedder`] does, and can be switched off and on.
pub(super) struct Flaky {
    pub(super) fingerprint: Fingerprint,
    up: Arc<std::sync::atomic::AtomicBool>,
}

impl Flaky {
    /// Up while `up` holds true.
    pub(super) fn new(up: &Arc<std::sync::atomic::AtomicBool>) -> Self {
        Self {
            fingerprint: Fingerprint::new(
                "flaky",
                "00ff00ff00ff",
                CONCEPTS.len() + 1,
                Pooling::Mean,
            )
            .expect("valid fingerprint"),
            up: up.clone(),
        }
    }
}

impl Embedder for Flaky {
    fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        CONCEPTS.len() + 1
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if self.up.load(Ordering::SeqCst) {
            Ok(texts.iter().map(|t| ConceptEmbedder::vector(t)).collect())
        } else {
            Err(EmbedError::Output {
                message: "switched off".into(),
            })
        }
    }
}

pub(super) fn concept_embedder() -> Arc<dyn Embedder> {
    Arc::new(ConceptEmbedder::new("0123456789ab"))
}

pub(super) fn user(ts: i64, text: &str) -> ContextEvent {
    ContextEvent::new(ts, "cli", text)
}

/// The user's turns `texts`, the first at `start_ms` and each `step_ms` after the one before.
pub(super) fn user_turns(start_ms: i64, step_ms: i64, texts: &[&str]) -> Vec<ContextEvent> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| user(start_ms + i as i64 * step_ms, t))
        .collect()
}

pub(super) fn seed_events() -> Vec<ContextEvent> {
    vec![
        user(1_000, "my kitten likes to sleep on the sofa"),
        user(2_000, "booked a flight for the trip to Lisbon"),
        user(3_000, "pizza for dinner tonight"),
        user(4_000, "the office moved to the fifth floor"),
        user(5_000, "my car is in the parking garage level two"),
    ]
}

pub(super) fn seeded(
    dir: &TempDir,
    embedder: Option<Arc<dyn Embedder>>,
) -> (ColdContext, Vec<i64>) {
    let mut cold = ColdContext::new(dir.store(), embedder);
    let ids = cold
        .archive_events(seed_events(), "import", 10_000)
        .expect("archive");
    (cold, ids)
}

pub(super) const DAY_MS: i64 = 24 * HOUR_MS;

pub(super) fn ids_of(hits: &[Recalled]) -> Vec<i64> {
    hits.iter().map(|h| h.id).collect()
}

/// Concepts of the companion test model: none of them is a concept of [`ConceptEmbedder`].
const COMPANION_CONCEPTS: &[&[&str]] = &[
    &["violin", "fiddle", "cello"],
    &["sofa", "couch", "armchair"],
    &["lisbon", "porto", "portugal"],
];

/// Words the companion understands in a query only (word, concept), the way instruction-tuned
/// models embed a question differently from a passage: a recall that embedded the query as a
/// passage would not see what "instrument" asks for.
const QUERY_ONLY_WORDS: &[(&str, usize)] = &[("instrument", 0)];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CompanionMode {
    Working,
    /// Every call fails.
    Failing,
    /// Queries work, passages fail: whatever it finds must have been read from the store.
    QueriesOnly,
}

/// A second deterministic "dense model", of another fingerprint and width than the main one.
pub(super) struct CompanionEmbedder {
    fingerprint: Fingerprint,
    mode: CompanionMode,
    pub(super) largest_batch: AtomicUsize,
}

impl CompanionEmbedder {
    const DIM: usize = COMPANION_CONCEPTS.len() + 1;

    pub(super) fn new(mode: CompanionMode) -> Self {
        Self {
            fingerprint: Fingerprint::new("companion", "fedcba987654", Self::DIM, Pooling::Mean)
                .expect("valid fingerprint"),
            mode,
            largest_batch: AtomicUsize::new(0),
        }
    }

    pub(super) fn vector(text: &str, query: bool) -> Vec<f32> {
        let lower = text.to_lowercase();
        let mut v: Vec<f32> = COMPANION_CONCEPTS
            .iter()
            .map(|words| words.iter().filter(|w| lower.contains(*w)).count() as f32)
            .collect();
        if query {
            for &(word, concept) in QUERY_ONLY_WORDS {
                if lower.contains(word) {
                    v[concept] += 1.0;
                }
            }
        }
        v.push(0.1);
        crate::l2_normalize(&mut v);
        v
    }

    fn down() -> EmbedError {
        EmbedError::Output {
            message: "the companion test model is down".into(),
        }
    }
}

impl Embedder for CompanionEmbedder {
    fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        Self::DIM
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Relaxed: a statistic read after the archive returned, on the same thread.
        self.largest_batch.fetch_max(texts.len(), Ordering::Relaxed);
        match self.mode {
            CompanionMode::Working => Ok(texts.iter().map(|t| Self::vector(t, false)).collect()),
            CompanionMode::Failing | CompanionMode::QueriesOnly => Err(Self::down()),
        }
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        match self.mode {
            CompanionMode::Failing => Err(Self::down()),
            CompanionMode::Working | CompanionMode::QueriesOnly => Ok(Self::vector(text, true)),
        }
    }
}

pub(super) fn companion(mode: CompanionMode) -> Arc<dyn Embedder> {
    Arc::new(CompanionEmbedder::new(mode))
}

pub(super) const COMPANION_FP: &str = "companion:fedcba987654:4:mean";

/// Found only in the companion's space: no word in common with [`INSTRUMENT_QUERY`], and to the
/// main model it is about cars.
pub(super) const FIDDLE: &str = "bought a fiddle at the garage sale";

/// Main model: the kitten entry only (every other cosine is under the relative floor).
/// Keywords: the kitten entry only. Companion (as a query): the fiddle first.
pub(super) const INSTRUMENT_QUERY: &str = "the instrument for my kitten";

/// The seed entries and then the fiddle (its id is the last).
pub(super) fn with_fiddle(cold: &mut ColdContext) -> Vec<i64> {
    let mut events = seed_events();
    events.push(user(6_000, FIDDLE));
    cold.archive_events(events, "import", 10_000)
        .expect("archive")
}

pub(super) fn side_count(cold: &ColdContext) -> usize {
    cold.store().cold_side_vectors(COMPANION_FP).count()
}

/// What cold context stores for `vector`: its quantized form, decoded.
pub(super) fn stored_form(vector: &[f32]) -> Vec<f32> {
    let mut q = vec![0i8; vector.len()];
    crate::simd::quantize(vector, &mut q);
    crate::simd::dequantize(&q)
}
