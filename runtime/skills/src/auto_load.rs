//! A skill's body in the turn whose input clearly asks for it, so the model need not spend a
//! round on `skill_load` first. Clearly means the input names the skill (`pdf-forms` or
//! `pdf forms`), or it shares at least [`MIN_SHARED_TERMS`] search terms (the recall index's
//! words and CJK bigrams, stop words left out) with the skill's name and description and those
//! are at least half of its own terms. The rule is conservative on purpose: a body is hundreds
//! of prompt tokens, and an ordinary "hello" shares nothing. At most one skill is loaded per
//! turn; two equally good matches load neither.
//!
//! It is a `pre_action` handler: the system message it adds to the stage context lands after
//! the input in that turn's request, once, and the context keeps it for the task's later
//! rounds.

use crate::Skill;
use hearth_memory::search_terms;
use hearth_stages::{
    CallContext, ContextMsg, HandlerError, HandlerId, HandlerSpec, Stage, StageContext,
    StagePipeline,
};
use serde_json::Value;
use std::collections::HashSet;

/// The owner of the handler in the pipeline.
pub const AUTO_LOAD_OWNER: &str = "skills";

/// Shared terms a description match needs at the least.
pub const MIN_SHARED_TERMS: usize = 3;

/// A body is cut here (about 1,500 tokens), so one skill cannot take over the prompt; the model
/// reads the rest through `skill_load`.
pub const MAX_BODY_CHARS: usize = 6_000;

/// Marks a context that already holds a skill's body (its name).
const LOADED_KEY: &str = "skill_loaded";

/// Whether `phrase` occurs in `text` (both lower-cased) between non-alphanumeric characters.
fn names(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

fn distinct_terms(text: &str) -> HashSet<String> {
    search_terms(text).into_iter().collect()
}

/// The skills with their descriptions' terms, computed once (the first one loads the Chinese
/// segmenter's dictionary, which takes seconds in a debug build).
#[derive(Debug)]
pub struct SkillMatcher {
    skills: Vec<Skill>,
    about: Vec<HashSet<String>>,
}

impl SkillMatcher {
    /// The matcher over `skills`.
    pub fn new(skills: Vec<Skill>) -> SkillMatcher {
        let about = skills
            .iter()
            .map(|s| distinct_terms(&format!("{} {}", s.name.replace('-', " "), s.description)))
            .collect();
        SkillMatcher { skills, about }
    }

    /// The skill `input` clearly asks for, if one does (see the module's rule).
    pub fn asked_for(&self, input: &str) -> Option<&Skill> {
        let lower = input.to_lowercase();
        let named: Vec<&Skill> = self
            .skills
            .iter()
            .filter(|s| names(&lower, &s.name) || names(&lower, &s.name.replace('-', " ")))
            .collect();
        if !named.is_empty() {
            // The longest name is the most specific ("pdf-forms" over "pdf").
            let longest = named.iter().map(|s| s.name.len()).max()?;
            let mut best = named.iter().filter(|s| s.name.len() == longest);
            return match (best.next(), best.next()) {
                (Some(one), None) => Some(one),
                _ => None,
            };
        }
        let wanted = distinct_terms(input);
        let mut scored: Vec<(usize, &Skill)> = self
            .skills
            .iter()
            .zip(&self.about)
            .map(|(s, about)| (wanted.intersection(about).count(), s))
            .filter(|(shared, _)| *shared >= MIN_SHARED_TERMS && shared * 2 >= wanted.len())
            .collect();
        scored.sort_by_key(|(shared, _)| std::cmp::Reverse(*shared));
        match scored[..] {
            [] => None,
            [(_, one)] => Some(one),
            [(a, one), (b, _), ..] => (a > b).then_some(one),
        }
    }
}

/// The system message that carries `skill`'s body.
pub fn instructions(skill: &Skill) -> String {
    let body = skill.body.trim();
    let cut = match body.char_indices().nth(MAX_BODY_CHARS) {
        Some((at, _)) => format!(
            "{}\n… (cut here; skill_load {{\"name\": \"{}\"}} returns the rest)",
            &body[..at],
            skill.name
        ),
        None => body.to_owned(),
    };
    format!("Skill {} (this request asks for it):\n{cut}", skill.name)
}

/// Registers the `pre_action` handler over `skills` (owner [`AUTO_LOAD_OWNER`]); with no
/// skills it registers nothing.
pub fn register_skill_auto_load(stages: &StagePipeline, skills: Vec<Skill>) -> Option<HandlerId> {
    if skills.is_empty() {
        return None;
    }
    // Built on the first input, not at start-up: the first matcher loads the Chinese
    // segmenter's dictionary, which would hold the daemon's start by a second or more.
    let matcher = std::sync::OnceLock::new();
    let handler = move |_: &CallContext, ctx: &mut StageContext| -> Result<(), HandlerError> {
        if ctx.extra.contains_key(LOADED_KEY) {
            return Ok(());
        }
        let matcher = matcher.get_or_init(|| SkillMatcher::new(skills.clone()));
        if let Some(skill) = matcher.asked_for(&ctx.raw_message) {
            ctx.context_msgs.push(ContextMsg {
                role: "system".into(),
                content: instructions(skill),
            });
            ctx.extra
                .insert(LOADED_KEY.into(), Value::String(skill.name.clone()));
        }
        Ok(())
    };
    Some(stages.register(Stage::PreAction, HandlerSpec::new(AUTO_LOAD_OWNER), handler))
}
