//! The tool schemas a task's requests carry (see [`crate::tool_choice`] for the rule).

use super::{TaskFrame, TurnEngine};
use crate::memory_service::ToolRanking;
use crate::tool_choice::{self, Candidate, RELEVANT_K, TOOL_SEARCH, ToolDoc, found_tools};
use hearth_llm::provider::ToolSpec;
use hearth_stages::{ToolDef, ToolSource};

/// One offerable tool and whether it is always offered.
struct Offerable {
    def: ToolDef,
    core: bool,
}

/// Every offerable tool but `tool_search`, as the request would carry it.
fn every_spec(all: &[Offerable]) -> Vec<ToolSpec> {
    all.iter()
        .filter(|o| o.def.name != TOOL_SEARCH)
        .map(|o| spec(&o.def))
        .collect()
}

fn spec(def: &ToolDef) -> ToolSpec {
    ToolSpec {
        name: def.name.clone(),
        description: def.description.clone(),
        parameters: def.parameters.clone(),
    }
}

/// The schemas as the request serialises them, for the token budget.
pub(super) fn schema_text(specs: &[ToolSpec]) -> String {
    serde_json::to_string(specs).unwrap_or_default()
}

impl TurnEngine {
    /// Every tool the model may be offered, in registration order; reply tools, built-ins and
    /// `skill_load` (whose description is how the model knows the skills) are core.
    fn offerable(&self) -> Vec<Offerable> {
        let env = self.pool.env();
        let tools = env
            .tools
            .offered()
            .into_iter()
            .map(|(def, owner)| Offerable {
                core: matches!(owner.source, ToolSource::Builtin | ToolSource::Skill),
                def,
            });
        let outputs = env
            .outputs
            .tool_defs()
            .into_iter()
            .map(|def| Offerable { def, core: true });
        tools.chain(outputs).collect()
    }

    /// What the memory pass should rank (nothing when the task's set is chosen or every tool
    /// fits), and the most schema text the request can carry, for the budget.
    pub(super) fn tools_to_rank(&self, frame: &TaskFrame) -> (Option<ToolRanking>, String) {
        if frame.tool_choice.is_some() {
            return (None, schema_text(&frame.tools));
        }
        let all = self.offerable();
        let every = schema_text(&every_spec(&all));
        if self.whole_set_fits(&all, &every) {
            return (None, every);
        }
        let (core, rest): (Vec<&Offerable>, Vec<&Offerable>) = all
            .iter()
            .filter(|o| o.def.name != TOOL_SEARCH)
            .partition(|o| o.core);
        let mut widest: Vec<ToolSpec> = rest.iter().map(|o| spec(&o.def)).collect();
        // Each schema serialised once, not once per comparison.
        widest
            .sort_by_cached_key(|s| std::cmp::Reverse(schema_text(std::slice::from_ref(s)).len()));
        widest.truncate(RELEVANT_K);
        widest.extend(core.iter().map(|o| spec(&o.def)));
        widest.push(spec(&tool_choice::tool_search_def()));
        let ranking = ToolRanking {
            index: self.tool_index.clone(),
            docs: rest.iter().map(|o| ToolDoc::of(&o.def)).collect(),
        };
        (Some(ranking), schema_text(&widest))
    }

    /// Chooses the task's tools at its first Prepare and resolves the chosen names against the
    /// live registries (a tool removed meanwhile drops out).
    pub(super) fn offer_tools(&self, frame: &mut TaskFrame) {
        let all = self.offerable();
        let chosen = match frame.tool_choice.take() {
            Some(chosen) => chosen,
            // Every tool goes: nothing to rank (tokenising on the worker is not free, and the
            // first use loads the segmenter's dictionary).
            None if self.whole_set_fits(&all, &schema_text(&every_spec(&all))) => all
                .iter()
                .filter(|o| o.def.name != TOOL_SEARCH)
                .map(|o| o.def.name.clone())
                .collect(),
            None => {
                let ranking = if frame.tool_ranking.is_empty() {
                    // No memory pass ranked them: shared words, cheap enough for the worker.
                    let docs: Vec<ToolDoc> = all
                        .iter()
                        .filter(|o| !o.core)
                        .map(|o| ToolDoc::of(&o.def))
                        .collect();
                    tool_choice::rank_by_terms(&frame.input, &docs)
                } else {
                    std::mem::take(&mut frame.tool_ranking)
                };
                let candidates: Vec<Candidate> = all
                    .iter()
                    .map(|o| Candidate {
                        name: o.def.name.clone(),
                        core: o.core,
                    })
                    .collect();
                tool_choice::choose(&candidates, &ranking, &self.tools_found(frame))
            }
        };
        frame.tools = chosen
            .iter()
            .filter_map(|n| all.iter().find(|o| o.def.name == *n))
            .map(|o| spec(&o.def))
            .collect();
        frame.tool_choice = Some(chosen);
    }

    /// Whether every tool goes into the request: at most [`tool_choice::FULL_SET_MAX`] of
    /// them, or all their schemas (`every`, as the request serialises them) within
    /// [`tool_choice::WHOLE_SET_SHARE`] of the working band of the default source's window.
    fn whole_set_fits(&self, all: &[Offerable], every: &str) -> bool {
        if tool_choice::fits(all.iter().map(|o| o.def.name.as_str())) {
            return true;
        }
        let band = hearth_memory::compute_token_budget(self.provider.max_context_tokens(), "")
            .target_usage;
        hearth_memory::estimate_tokens(every) as f64 <= band as f64 * tool_choice::WHOLE_SET_SHARE
    }

    /// Adds the tools the task used or found since the set was chosen; before each request.
    pub(super) fn grow_tools(&self, frame: &mut TaskFrame) {
        let found = self.tools_found(frame);
        let Some(chosen) = frame.tool_choice.as_mut() else {
            return;
        };
        if tool_choice::grow(chosen, found) {
            self.offer_tools(frame);
        }
    }

    /// The tools this task called or `tool_search` returned, in order.
    fn tools_found(&self, frame: &TaskFrame) -> Vec<String> {
        let mut names = frame.tools_used.clone();
        names.extend(found_tools(&frame.tool_results));
        names
    }
}
