//! How recall ranks and how much it injects: the settings and their measured defaults.

use super::*;
use hearth_engine::LocalZone;

/// How recall ranks and how much it injects.
///
/// The ranking defaults are measured on dev sets where a date cannot tell whose history an entry
/// is (ARCHITECTURE §7): above-chance fusion (a dense list counts by how far its matches stand
/// out of the whole store's cosines, so two dense models that tie a whole topic cannot outvote
/// the keyword list's rare word) with even weights, the speaker weighing and the named-speaker
/// weighing, a named span's boost, and recency only for queries that name a time. Candidates
/// beyond the top 50 of each list are needed (`depth` 200). Passage averaging, best-passage
/// scoring, sentence-level max-similarity, dense pseudo-relevance feedback, word-bigram BM25,
/// session-level score propagation and session documents measured flat or lower, hence off or
/// absent.
#[derive(Clone, Debug, PartialEq)]
pub struct RecallConfig {
    /// How the keyword and dense lists are fused.
    pub fusion: FusionMethod,
    /// Under [`FusionMethod::AboveChance`], the share of what chance gives the best of the
    /// store's cosines (`expected_best_of`) that a dense list's standard scores are lowered by.
    pub chance_margin: f64,
    /// Reciprocal rank fusion constant.
    pub rrf_k: f64,
    /// Candidates taken from each index before fusion (at least the `k` asked for).
    pub depth: usize,
    /// Weight of the dense ranking in the fusion.
    pub dense_weight: f64,
    /// Weight of the keyword (BM25) ranking in the fusion.
    pub keyword_weight: f64,
    /// Dense candidates must reach this fraction of the best candidate's cosine.
    pub dense_relative_floor: f32,
    /// Weight of the companion model's ranking in the fusion (when one is attached).
    pub companion_weight: f64,
    /// [`dense_relative_floor`](Self::dense_relative_floor) for the companion. Off by default:
    /// its cosines sit in a narrow band (about 0.7–0.9), so a fraction of the best one does not
    /// separate a match from noise.
    pub companion_relative_floor: f32,
    /// Texts longer than this many characters are embedded as passages of about this size and
    /// their vectors averaged (0: embed the text whole, cut at the model's token limit).
    pub passage_chars: usize,
    /// Weight of the passage list in the fusion (each long entry of the person scored by its
    /// best passage, [`ColdContext::index_passages`](super::ColdContext::index_passages)); 0,
    /// the default, leaves it out. Measured, not a default: see ARCHITECTURE §7.
    pub passage_list_weight: f64,
    /// Passage size of that list, in characters (where the bench builds it).
    pub passage_list_chars: usize,
    /// Auto-injection floor with a dense model: an entry is injected only when its cosine to
    /// the query reaches this.
    pub inject_min_cosine: f32,
    /// Auto-injection floor without one: sparse (word) cosine between query and entry text.
    pub inject_min_sparse: f32,
    /// At most this many entries are injected (SPEC §5.1: top 3).
    pub inject_max_items: usize,
    /// A short input whose main-model cosine to a small-talk phrase (`SMALL_TALK`) reaches this
    /// gets nothing injected: a greeting or an "ok" asks for nothing, and over a long history
    /// it matches the history's own greetings (above 1: never).
    pub small_talk_cosine: f32,
    /// The user's time zone: dates in injected blocks (each in the offset of its instant), and
    /// the calendar days that "yesterday", "last Tuesday" and the no-future rule are reckoned
    /// in (the offset when the query is asked).
    pub zone: LocalZone,
    /// Leave out entries dated after the day the query is asked (for replaying a history as
    /// of a past day; a live assistant is asked after everything).
    pub exclude_future: bool,
    /// An entry this many days old counts half way between full and `recency_floor`
    /// (0: no recency weighting).
    pub recency_half_life_days: f64,
    /// The least an old entry's score is multiplied by for its age.
    pub recency_floor: f64,
    /// Factor on entries dated inside a time span the query names ("two weeks ago").
    pub time_window_boost: f64,
    /// Factor on the agent's own replies when the query is about the user's life.
    pub agent_words_weight: f64,
    /// Factor on the user's inputs when the query asks about the agent's words.
    pub user_words_weight: f64,
    /// Factor on a person's inputs when the query names other people who speak in the
    /// history (and not them).
    pub unnamed_speaker_weight: f64,
}

impl Default for RecallConfig {
    fn default() -> Self {
        Self {
            fusion: FusionMethod::AboveChance,
            chance_margin: 0.25,
            rrf_k: DEFAULT_RRF_K,
            depth: 200,
            dense_weight: 1.0,
            keyword_weight: 1.0,
            dense_relative_floor: 0.5,
            companion_weight: 1.0,
            companion_relative_floor: 0.0,
            passage_chars: 0,
            passage_list_weight: 0.0,
            passage_list_chars: 0,
            inject_min_cosine: 0.35,
            inject_min_sparse: 0.2,
            inject_max_items: 3,
            small_talk_cosine: 0.65,
            zone: LocalZone::default(),
            exclude_future: false,
            recency_half_life_days: 14.0,
            recency_floor: 0.5,
            time_window_boost: 2.0,
            agent_words_weight: 0.5,
            user_words_weight: 0.7,
            unnamed_speaker_weight: 0.5,
        }
    }
}
