//! What recall knows about a query besides its words: when it is asked, what time it points
//! at, and whose words it is after. Each becomes a factor on an entry's fused score, so the
//! relevance ranking stays in charge and these only reorder near-ties:
//!
//! - **Nothing from the future, when asked for** (`exclude_future`, off by default). Replaying a
//!   history as of a past day, an entry dated after that day cannot be what it is about.
//!   Compared by local calendar day, because imported times often carry a session's date
//!   rather than each turn's minute. Off by default: a live assistant is asked at "now", after
//!   everything; on a dev set whose sessions are not all before the question it only loses
//!   evidence, and on one whose dates leak who a question belongs to it does relevance's job.
//! - **Recency, when the query names a time.** Within a span the query names, and around it,
//!   the nearer entry is the likelier one; an older entry keeps at least `recency_floor` of its
//!   score, so a clear match from months ago still wins. A query that names no time gets no
//!   recency: the whole history lies before "now", and the newest of equal matches is not more
//!   likely what is asked about.
//! - **Time expressions.** "two weeks ago", "last Tuesday", "in March", "上周二" name a span
//!   (see `time_expr`); entries dated inside it count `time_window_boost` times, and every list
//!   also searches inside the span, so a weaker match from that day is a candidate even when a
//!   long history holds hundreds of closer ones from other days.
//! - **Whose words.** A memory of the user's life is in what the user said; the agent's long
//!   answers match many queries by sheer vocabulary. Unless the query asks about the agent's
//!   own words ("the restaurant you recommended", see `speaker_focus`), the agent's entries
//!   count `agent_words_weight`; when it does, the user's entries count `user_words_weight`.
//! - **Whom it names.** When the query names people who speak in the history ("what did Ana
//!   say about the trip", see `named_speakers`), the inputs of the others count
//!   `unnamed_speaker_weight`.

use std::collections::HashSet;

use crate::recall::RecallConfig;
use crate::recall::entry_meta::{EntryMeta, Speaker};
use crate::recall::named_speakers::Speakers;
use crate::recall::speaker_focus::asks_about_agent_words;
use crate::recall::time_expr::{TimeWindow, question_windows};

const MS_PER_DAY: i64 = 86_400_000;

impl RecallConfig {
    /// This configuration with every query prior neutral (no recency, no boost for a named
    /// span, every speaker's words alike): the fused relevance ranking alone. The rule that
    /// nothing said after the day asked is recalled stays: it is what "asked then" means, not
    /// a weighing.
    pub fn without_priors(self) -> Self {
        Self {
            recency_half_life_days: 0.0,
            time_window_boost: 1.0,
            agent_words_weight: 1.0,
            user_words_weight: 1.0,
            unnamed_speaker_weight: 1.0,
            ..self
        }
    }
}

/// The factors of one query, computed once and applied to every candidate.
#[derive(Clone, Debug)]
pub(crate) struct QueryPriors {
    now_ms: i64,
    before_ms: i64,
    windows: Vec<TimeWindow>,
    about_agent: bool,
    half_life_ms: f64,
    floor: f64,
    window_boost: f64,
    agent_weight: f64,
    user_weight: f64,
    /// Keys of the speakers the query names (empty: it names none).
    named: HashSet<u64>,
    unnamed_weight: f64,
}

impl QueryPriors {
    /// The priors of `query` asked at `now_ms` under `config`.
    pub(crate) fn new(query: &str, now_ms: i64, config: &RecallConfig) -> Self {
        let offset = config.zone.offset_at(now_ms);
        let offset_ms = offset.saturating_mul(1000);
        let local_day = now_ms.saturating_add(offset_ms).div_euclid(MS_PER_DAY);
        let before_ms = if config.exclude_future {
            local_day
                .saturating_add(1)
                .saturating_mul(MS_PER_DAY)
                .saturating_sub(offset_ms)
        } else {
            i64::MAX
        };
        Self {
            now_ms,
            before_ms,
            windows: question_windows(query, now_ms, offset),
            about_agent: asks_about_agent_words(query),
            half_life_ms: config.recency_half_life_days * MS_PER_DAY as f64,
            floor: config.recency_floor.clamp(0.0, 1.0),
            window_boost: config.time_window_boost,
            agent_weight: config.agent_words_weight,
            user_weight: config.user_words_weight,
            named: HashSet::new(),
            unnamed_weight: config.unnamed_speaker_weight,
        }
    }

    /// These priors, knowing who speaks in the history.
    pub(crate) fn with_speakers(mut self, query: &str, speakers: &Speakers) -> Self {
        self.named = speakers.named_in(query);
        self
    }

    /// The factor on the fused score of an entry with `meta`: [`factor`](Self::factor), and
    /// `unnamed_speaker_weight` on a person's input when the query names others.
    pub(crate) fn entry_factor(&self, meta: &EntryMeta) -> f64 {
        let named = if meta.speaker == Speaker::User
            && !self.named.is_empty()
            && !self.named.contains(&meta.source_key)
        {
            self.unnamed_weight
        } else {
            1.0
        };
        self.factor(meta.timestamp_ms, meta.speaker) * named
    }

    /// Entries at or after this instant (the start of the local day after the query's) are
    /// not candidates.
    pub(crate) fn before_ms(&self) -> i64 {
        self.before_ms
    }

    /// Whether an entry at `timestamp_ms` may be recalled at all.
    pub(crate) fn admits(&self, timestamp_ms: i64) -> bool {
        timestamp_ms < self.before_ms
    }

    /// Whether the query names a time span ("last Saturday", "in March"): recall then also
    /// searches inside it, so an entry from that span that no list put in its top candidates
    /// over the whole history can still be found.
    pub(crate) fn names_span(&self) -> bool {
        !self.windows.is_empty()
    }

    /// Whether `timestamp_ms` lies in a span the query names.
    pub(crate) fn in_span(&self, timestamp_ms: i64) -> bool {
        self.windows.iter().any(|w| w.contains(timestamp_ms))
    }

    #[cfg(test)]
    pub(crate) fn windows(&self) -> &[TimeWindow] {
        &self.windows
    }

    /// Whether the query asks about the agent's own words.
    #[cfg(test)]
    pub(crate) fn about_agent(&self) -> bool {
        self.about_agent
    }

    /// The factor on the fused score of an entry at `timestamp_ms` said by `speaker`.
    pub(crate) fn factor(&self, timestamp_ms: i64, speaker: Speaker) -> f64 {
        if !self.admits(timestamp_ms) {
            return 0.0;
        }
        // Recency only weighs a query that names a time: asked "now" about a whole life, the
        // newest of equally good matches is not more likely the answer, and on a history
        // where it leaked who a question belonged to it had been doing relevance's job.
        let recency = if self.half_life_ms > 0.0 && !self.windows.is_empty() {
            let age = self.now_ms.saturating_sub(timestamp_ms).max(0) as f64;
            self.floor + (1.0 - self.floor) * (-age / self.half_life_ms).exp2()
        } else {
            1.0
        };
        let window = if self.in_span(timestamp_ms) {
            self.window_boost
        } else {
            1.0
        };
        let speaker = match (speaker, self.about_agent) {
            (Speaker::Agent, false) => self.agent_weight,
            (Speaker::User, true) => self.user_weight,
            _ => 1.0,
        };
        recency * window * speaker
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = MS_PER_DAY;
    /// 2023-05-05 12:00 UTC.
    const NOW: i64 = 1_683_288_000_000;

    fn priors(query: &str) -> QueryPriors {
        QueryPriors::new(query, NOW, &RecallConfig::default())
    }

    #[test]
    fn recall_priors_nothing_after_the_query_day_when_asked_for() {
        let cutoff = RecallConfig {
            exclude_future: true,
            ..RecallConfig::default()
        };
        assert!(
            priors("what did I cook").admits(NOW + 400 * DAY),
            "off by default"
        );
        let p = QueryPriors::new("what did I cook", NOW, &cutoff);
        // Later the same (UTC) day is still admitted; the next day is not.
        assert!(p.admits(NOW + 11 * 3_600_000));
        assert!(!p.admits(NOW + 12 * 3_600_000));
        assert_eq!(p.factor(NOW + DAY, Speaker::User), 0.0);
        // The day boundary follows the user's zone: at UTC+14 it is already 2023-05-06 02:00,
        // whose day ends at 2023-05-06 10:00 UTC.
        let east = QueryPriors::new(
            "what did I cook",
            NOW,
            &RecallConfig {
                zone: hearth_engine::LocalZone::fixed(14 * 3600),
                ..cutoff
            },
        );
        assert_eq!(east.before_ms(), NOW + 22 * 3_600_000);
    }

    #[test]
    fn recall_priors_recency_halves_towards_the_floor() {
        let p = priors("what did I cook in March");
        let config = RecallConfig::default();
        let half = (config.recency_half_life_days * DAY as f64) as i64;
        let now = p.factor(NOW, Speaker::User);
        let one = p.factor(NOW - half, Speaker::User);
        let old = p.factor(NOW - 100 * half, Speaker::User);
        assert!((now - 1.0).abs() < 1e-9);
        let floor = config.recency_floor;
        assert!((one - (floor + (1.0 - floor) / 2.0)).abs() < 1e-9, "{one}");
        assert!((old - floor).abs() < 1e-6, "{old}");
        // No time named: no recency at all.
        let untimed = priors("what did I cook");
        assert_eq!(untimed.factor(NOW - 100 * half, Speaker::User), 1.0);
        let off = QueryPriors::new(
            "x in March",
            NOW,
            &RecallConfig {
                recency_half_life_days: 0.0,
                ..config
            },
        );
        assert_eq!(off.factor(NOW - 400 * DAY, Speaker::User), 1.0);
    }

    #[test]
    fn recall_priors_weigh_whose_words_the_query_is_after() {
        let config = RecallConfig::default();
        let mine = priors("what degree did I graduate with");
        assert!(!mine.about_agent());
        assert_eq!(mine.factor(NOW, Speaker::Agent), config.agent_words_weight);
        assert_eq!(mine.factor(NOW, Speaker::User), 1.0);
        assert_eq!(mine.factor(NOW, Speaker::Both), 1.0);
        let yours = priors("what was the hostel you recommended in Amsterdam");
        assert!(yours.about_agent());
        assert_eq!(yours.factor(NOW, Speaker::Agent), 1.0);
        assert_eq!(yours.factor(NOW, Speaker::User), config.user_words_weight);
    }

    #[test]
    fn recall_priors_boost_entries_inside_a_named_span() {
        let config = RecallConfig::default();
        let p = priors("what did I plant two weeks ago");
        assert!(!p.windows().is_empty());
        let inside = NOW - 14 * DAY;
        let outside = NOW - 30 * DAY;
        let recency = |ts: i64| {
            let age = (NOW - ts) as f64 / (config.recency_half_life_days * DAY as f64);
            config.recency_floor + (1.0 - config.recency_floor) * (-age).exp2()
        };
        let got = p.factor(inside, Speaker::User);
        assert!((got - recency(inside) * config.time_window_boost).abs() < 1e-9);
        assert!((p.factor(outside, Speaker::User) - recency(outside)).abs() < 1e-9);
    }
}
