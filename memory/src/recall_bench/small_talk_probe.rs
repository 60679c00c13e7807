//! What small talk brings into the prompt: greetings, thanks and acknowledgements phrased as
//! none of the rule's own phrases (`SMALL_TALK`), each put to every corpus as an input, with the
//! rule and without it in the same run.

use crate::recall::{ColdContext, RecallConfig, RecallError};

/// Small talk in other words than the rule's phrases, English and Chinese. The rule was set
/// before these were measured; they are not for tuning it.
pub const SMALL_TALK_PROBES: &[&str] = &[
    "hiya!",
    "morning!",
    "thx",
    "cheers mate",
    "alright",
    "cool, thanks!",
    "sounds good",
    "great, thank you so much",
    "no worries",
    "talk later",
    "good evening",
    "how's it going?",
    "what's up",
    "perfect",
    "haha nice",
    "okie dokie",
    "you're welcome",
    "nice",
    "謝謝你",
    "你好呀",
    "好吧",
    "明白了",
    "收到",
    "拜拜",
    "晚上好",
    "嗯嗯",
    "太好了",
    "没问题",
    "hey there",
    "yep",
];

/// Memories injected for the probes, summed over the corpora they were put to.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SmallTalkCount {
    /// Probe inputs put (probes × corpora).
    pub inputs: usize,
    /// Entries injected for them under the run's config.
    pub items: usize,
    /// Inputs that got any entry under the run's config.
    pub inputs_with_items: usize,
    /// Entries injected for them with the small-talk rule off (the same run's baseline).
    pub items_without_rule: usize,
    /// Inputs that got any entry with the rule off.
    pub inputs_with_items_without_rule: usize,
}

impl SmallTalkCount {
    /// Puts every probe to `cold` as an input asked at `now_ms` within `memory_tokens`, under
    /// its config and then with the rule off; the config is left as it was. The injected
    /// entries count an access, as a daemon's would.
    pub fn probe(
        cold: &mut ColdContext,
        memory_tokens: usize,
        now_ms: i64,
    ) -> Result<Self, RecallError> {
        let config = cold.config().clone();
        let with = injected_per_probe(cold, memory_tokens, now_ms)?;
        cold.set_config(RecallConfig {
            small_talk_cosine: f32::INFINITY,
            ..config.clone()
        });
        let without = injected_per_probe(cold, memory_tokens, now_ms);
        cold.set_config(config);
        let without = without?;
        let any = |counts: &[usize]| counts.iter().filter(|&&n| n > 0).count();
        Ok(Self {
            inputs: SMALL_TALK_PROBES.len(),
            items: with.iter().sum(),
            inputs_with_items: any(&with),
            items_without_rule: without.iter().sum(),
            inputs_with_items_without_rule: any(&without),
        })
    }

    /// Adds another corpus's count.
    pub fn add(&mut self, other: Self) {
        self.inputs += other.inputs;
        self.items += other.items;
        self.inputs_with_items += other.inputs_with_items;
        self.items_without_rule += other.items_without_rule;
        self.inputs_with_items_without_rule += other.inputs_with_items_without_rule;
    }

    /// Entries injected per input: (under the config, with the rule off).
    pub fn per_input(&self) -> (f64, f64) {
        let n = self.inputs.max(1) as f64;
        (self.items as f64 / n, self.items_without_rule as f64 / n)
    }
}

/// The entries injected for each probe under `cold`'s config.
fn injected_per_probe(
    cold: &mut ColdContext,
    memory_tokens: usize,
    now_ms: i64,
) -> Result<Vec<usize>, RecallError> {
    SMALL_TALK_PROBES
        .iter()
        .map(|probe| Ok(cold.inject(probe, memory_tokens, now_ms)?.event_ids.len()))
        .collect()
}
