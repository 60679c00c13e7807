//! Which tool schemas a request carries. Every schema is paid for in prompt tokens, and on a
//! home CPU the prefill of a long prompt takes minutes. While every schema together takes at
//! most [`WHOLE_SET_SHARE`] of the model's working band (or there are at most
//! [`FULL_SET_MAX`] tools), every tool goes, the same set on every turn: a local model's
//! server reuses the prompt it read up to the first difference, and a model server's template
//! lists the tools in the system block, so a set chosen per input made it read the whole
//! prompt again every turn. Past that a request carries only:
//!
//! - the core set: the output channels' reply tools, tools compiled into the daemon and
//!   `skill_load`;
//! - the [`RELEVANT_K`] tools whose descriptions are nearest to the input, by the recall
//!   embedding (shared words when no model is loaded);
//! - the tools this task already used or found;
//! - [`TOOL_SEARCH`], through which the model finds any other tool.
//!
//! The set is chosen once per task and only grows after (a tool found or used joins at the
//! end), so the prompt prefix up to the tools stays the same between the task's rounds and
//! caches. The rule has no knowledge of any particular tool or request.

mod index;
mod search;

pub use index::{ToolDoc, ToolIndex, rank_by_terms};
pub use search::{TOOL_SEARCH, found_tools, register_tool_search, tool_search_def};

use std::collections::HashSet;

/// At or below this many tools every tool is offered: choosing would save little.
pub const FULL_SET_MAX: usize = 8;

/// Every tool is offered while all their schemas take at most this share of the working band
/// (by the budget's estimate): a quarter of a 32k window's band holds ~35 of the daemon's own.
pub const WHOLE_SET_SHARE: f64 = 0.25;

/// How many tools nearest to the input join the core set.
pub const RELEVANT_K: usize = 5;

/// One tool as the rule sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Its name.
    pub name: String,
    /// Whether it is always offered.
    pub core: bool,
}

/// Whether every one of `names` goes into the request (no choosing): at most
/// [`FULL_SET_MAX`] of them, `tool_search` aside.
pub fn fits<'a>(names: impl IntoIterator<Item = &'a str>) -> bool {
    names.into_iter().filter(|n| *n != TOOL_SEARCH).count() <= FULL_SET_MAX
}

/// The names a request offers, in the candidates' order, `TOOL_SEARCH` last when the set is
/// partial. `ranking` is every non-core candidate, nearest first; `used` the tools the task
/// already called or found.
pub fn choose(candidates: &[Candidate], ranking: &[String], used: &[String]) -> Vec<String> {
    let offerable = candidates.iter().filter(|c| c.name != TOOL_SEARCH);
    if fits(candidates.iter().map(|c| c.name.as_str())) {
        return offerable.map(|c| c.name.clone()).collect();
    }
    let relevant: HashSet<&str> = ranking
        .iter()
        .map(String::as_str)
        .filter(|n| candidates.iter().any(|c| c.name == *n && !c.core))
        .take(RELEVANT_K)
        .chain(used.iter().map(String::as_str))
        .collect();
    let mut names: Vec<String> = offerable
        .filter(|c| c.core || relevant.contains(c.name.as_str()))
        .map(|c| c.name.clone())
        .collect();
    names.push(TOOL_SEARCH.to_owned());
    names
}

/// `chosen` grown by the names in `more` it lacks, appended in order (the prefix stays).
pub fn grow(chosen: &mut Vec<String>, more: impl IntoIterator<Item = String>) -> bool {
    let mut grew = false;
    for name in more {
        if !chosen.contains(&name) {
            chosen.push(name);
            grew = true;
        }
    }
    grew
}

#[cfg(test)]
mod tests;
