//! L3 in the kernel: the graph file's one owner, its distillation heartbeat, the indexer block
//! and the requests of the graph tools and the `hearth memory` commands.
//!
//! The [`GraphMemory`] lives inside the memory service on the store's owner thread, so one
//! thread opens `graph.db` and every write to it is serialised with the cold context it reads.
//! A graph file that cannot be opened (foreign, corrupt, from a newer Hearth) is logged as an
//! error and left untouched; the daemon runs without L3 and every graph request says why.

use crate::GraphMemoryError;
use crate::input::InputEvent;
use crate::model_distill::{ModelDistill, ModelDistillSettings, cold_item};
use crate::turn_scene::{ScenePeer, TurnScene, local_hour};
use hearth_engine::{Sink, duration_ms};
use hearth_graph::{
    DEFAULT_REF_FLOOR, FactHit, FactId, FactSource, FactStatus, GraphStore, Peer, Provenance,
    RecallLimits, RuleDistiller, SceneFeature, TurnSituation, normalize_scene_key, topic_keywords,
    turn_features,
};
use hearth_memory::{ColdContext, estimate_tokens};
use serde_json::{Value, json};
use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::time::Duration;

/// How often the distillation heartbeat runs when the configuration says nothing (SPEC §5.9).
pub const DEFAULT_DISTILL_INTERVAL: Duration = Duration::from_secs(600);
/// Cold items read per heartbeat, so one tick never holds the owner thread for long.
const DISTILL_BATCH: usize = 64;
/// Fact ids handed to the model by `memory_recall`, kept out of the automatic block (the
/// model already has them in its context).
const RECALLED_FIFO: usize = 1_024;
/// Facts the indexer considers per turn before the budget cuts.
pub const INDEXER_FACTS: usize = 8;
/// How long a scene's refs to its facts keep their weight when the scene is not entered, when
/// the configuration says nothing (`graph_scene_half_life_secs`).
pub const DEFAULT_SCENE_HALF_LIFE: Duration = Duration::from_secs(14 * 86_400);
/// Scenes `memory_introspect` lists (the most recently entered).
const LISTED_SCENES: usize = 8;
/// The header of the facts recalled by the turn's scenes, before the block's other facts.
pub const SCENE_FACTS_HEADER: &str = "Known facts of this scene (from memory):";
/// The header of the indexer's block.
pub const FACTS_HEADER: &str = "Known facts (from memory):";

/// Settings of the graph memory.
#[derive(Clone, Debug)]
pub struct GraphSettings {
    /// The graph file (`graph.db` beside the store).
    pub path: PathBuf,
    /// How often new cold material is distilled.
    pub interval: Duration,
    /// The model distiller (`None`: rules only).
    pub model: Option<ModelDistillSettings>,
    /// The half-life of scene refs, applied on the heartbeat (`None`: they never fade).
    pub scene_half_life: Option<Duration>,
}

/// A request to the graph, from a tool or the control socket.
#[derive(Clone, Debug)]
pub enum GraphRequest {
    /// Facts for a query, current and past, with their sources.
    Recall {
        /// What to look for.
        query: String,
        /// How many facts.
        k: usize,
        /// The answer goes to the model (its facts are then left out of the automatic block);
        /// a person's search leaves the block as it was.
        for_model: bool,
    },
    /// Forget a fact by its id.
    Forget {
        /// `r<n>` or `e<n>`.
        id: String,
    },
    /// The sentences and turns behind a fact.
    Why {
        /// `r<n>` or `e<n>`.
        id: String,
    },
    /// Store a fact told directly.
    Commit {
        /// Who or what it is about.
        subject: String,
        /// A predicate identifier (`lives_in`).
        predicate: String,
        /// The value.
        object: String,
        /// The words it was said in (provenance).
        sentence: String,
        /// Media kept with the fact, as digests or the prefixes markers show: the store owner
        /// checks them and writes their markers into `sentence` before the request runs, so
        /// `memory_why` shows what the fact was told with.
        media: Vec<String>,
    },
    /// Correct the value of a fact.
    Edit {
        /// `r<n>`.
        id: String,
        /// The right value.
        object: String,
        /// Why (provenance of the correction).
        sentence: String,
    },
    /// Counts and the heartbeat's state.
    Stats,
    /// What is known about one person.
    Person {
        /// Their name or alias ("me" for the user).
        name: String,
    },
    /// Set a person's trait (one value at a time; the old one is kept as history).
    SetTrait {
        /// Whose.
        name: String,
        /// The trait, in words ("favourite colour").
        trait_words: String,
        /// Its value.
        value: String,
        /// The user's words (provenance).
        sentence: String,
    },
    /// State how two people are related.
    Relate {
        /// Who.
        a: String,
        /// How, in words ("sister of").
        relation: String,
        /// To whom.
        b: String,
        /// The user's words (provenance).
        sentence: String,
    },
    /// The relations between people reachable from one person.
    Network {
        /// From whom.
        name: String,
        /// Steps (1–3).
        depth: u8,
    },
    /// Merge one entity into another, or remember that two must stay apart.
    Merge {
        /// The name that goes (it becomes an alias of `target`).
        source: String,
        /// The name that stays.
        target: String,
        /// Do not merge: stop proposing this pair.
        keep_apart: bool,
    },
    /// One trait of a person: its value now and before, with the sentences.
    Trait {
        /// Whose ("me" for the user).
        name: String,
        /// The trait, in words ("favourite colour").
        trait_words: String,
    },
    /// The people the graph knows, most mentioned first.
    People {
        /// At most this many.
        limit: usize,
    },
    /// Remove every relation the criteria select together; each criterion must match on its
    /// own, so a misspelt one never widens it.
    Purge {
        /// Who, what and from which cold item.
        criteria: hearth_graph::PurgeCriteria,
        /// Forget them (never distilled again) instead of ending them (kept as past history).
        hard: bool,
    },
}

/// The graph's owner inside the memory service.
pub(crate) struct GraphMemory {
    store: Option<GraphStore>,
    /// Why there is no store, for every request that needs it.
    unavailable: String,
    interval: Duration,
    next_tick_ms: i64,
    recalled: VecDeque<FactId>,
    recalled_set: HashSet<FactId>,
    ticks: u64,
    idle_ticks: u64,
    model: ModelDistill,
    scene_half_life: Option<Duration>,
    /// Turns that entered their scenes since start.
    scene_turns: u64,
    /// Scene refs halved and deleted by the decay since start.
    refs_halved: u64,
    refs_deleted: u64,
}

/// The scenes one turn entered, for the recall of its block.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SceneNow {
    /// Declared keys first (the payload's, then the channel's), then the emergent one.
    pub(crate) keys: Vec<String>,
    /// The turn's fingerprint, for the emergent scenes it resembles.
    pub(crate) features: Vec<SceneFeature>,
}

impl GraphMemory {
    /// Opens the graph file; on failure runs without one and says so. `submit` hands the
    /// model distiller's consolidation tasks to the kernel (`None`: rules only).
    pub(crate) fn open(
        settings: Option<&GraphSettings>,
        now_ms: i64,
        submit: Option<Sink<InputEvent>>,
    ) -> Self {
        let scene_half_life = settings
            .and_then(|s| s.scene_half_life)
            .filter(|d| !d.is_zero());
        let (store, unavailable, interval) = match settings {
            None => (
                None,
                "graph memory is off".to_string(),
                DEFAULT_DISTILL_INTERVAL,
            ),
            Some(s) => match GraphStore::open(&s.path) {
                Ok(store) => {
                    tracing::info!(path = %s.path.display(), "graph memory opened");
                    (Some(store), String::new(), s.interval)
                }
                Err(e) => {
                    tracing::error!(
                        "graph memory unavailable, running without it (the file is left as it is): {e}"
                    );
                    (None, format!("graph memory unavailable: {e}"), s.interval)
                }
            },
        };
        let model = ModelDistill::new(
            settings
                .and_then(|s| s.model.clone())
                .filter(|_| store.is_some()),
            submit,
            now_ms,
        );
        Self {
            model,
            store,
            unavailable,
            interval,
            // The first tick comes one interval after start: at start the window is all new.
            next_tick_ms: now_ms.saturating_add(duration_ms(interval)),
            recalled: VecDeque::new(),
            recalled_set: HashSet::new(),
            ticks: 0,
            idle_ticks: 0,
            scene_half_life,
            scene_turns: 0,
            refs_halved: 0,
            refs_deleted: 0,
        }
    }

    /// How long until the heartbeat is due (`None` without a graph).
    pub(crate) fn idle_wait(&self, now_ms: i64) -> Option<Duration> {
        self.store.as_ref()?;
        let left = self.next_tick_ms.saturating_sub(now_ms).max(0);
        let rules = Duration::from_millis(left as u64);
        Some(self.model.idle_wait(now_ms).map_or(rules, |m| m.min(rules)))
    }

    /// Runs the heartbeat if it is due.
    pub(crate) fn tick_if_due(&mut self, cold: &ColdContext, now_ms: i64) {
        if let Some(store) = self.store.as_mut() {
            self.model.step(store, cold, now_ms);
        }
        if self.store.is_none() || now_ms < self.next_tick_ms {
            return;
        }
        self.next_tick_ms = now_ms.saturating_add(duration_ms(self.interval));
        self.ticks += 1;
        match self.heartbeat(cold, now_ms) {
            Ok(0) => {
                self.idle_ticks += 1;
                tracing::debug!("graph heartbeat: nothing new to distill");
            }
            Ok(items) => tracing::debug!(items, "graph heartbeat distilled cold items"),
            Err(e) => tracing::warn!("graph heartbeat failed (retried next tick): {e}"),
        }
        self.decay_scenes(now_ms);
    }

    /// Fades the refs of scenes not entered for a half-life (off without one).
    fn decay_scenes(&mut self, now_ms: i64) {
        let (Some(graph), Some(half_life)) = (self.store.as_mut(), self.scene_half_life) else {
            return;
        };
        match graph.decay_scene_refs(duration_ms(half_life), DEFAULT_REF_FLOOR, now_ms) {
            Ok(d) if d.halved == 0 && d.deleted == 0 => {
                tracing::debug!("graph heartbeat: no scene ref to fade");
            }
            Ok(d) => {
                self.refs_halved += d.halved as u64;
                self.refs_deleted += d.deleted as u64;
                tracing::info!(
                    halved = d.halved,
                    deleted = d.deleted,
                    "graph scene refs faded"
                );
            }
            Err(e) => tracing::warn!("graph scene decay failed (retried next tick): {e}"),
        }
    }

    /// Enters the scenes of one turn, once: the declared ones (`payload.scene`, then
    /// `chan:<source>`) and the emergent one its fingerprint joins or starts (channel, peer,
    /// part of the day at `utc_offset_secs`, up to three topic keywords of `query`; the
    /// turn's tools are not known yet when its pass runs: they join once its reply is recorded,
    /// [`GraphMemory::note_turn_tools`]). The keys
    /// are noted for the turn's id, so facts distilled from it later are tagged with them.
    /// `None` without a graph, for an empty query, or when the graph failed (logged: a turn
    /// never fails because of its scene). A declared key with nothing left after
    /// normalisation is logged at debug and left out.
    pub(crate) fn enter_scene(
        &mut self,
        scene: &TurnScene,
        query: &str,
        utc_offset_secs: i64,
        now_ms: i64,
    ) -> Option<SceneNow> {
        let graph = self.store.as_mut()?;
        if query.trim().is_empty() {
            return None;
        }
        let mut declared: Vec<String> = Vec::with_capacity(scene.declared.len() + 1);
        for raw in &scene.declared {
            match normalize_scene_key(raw) {
                Ok(key) => declared.push(key),
                Err(e) => tracing::debug!("declared scene ignored: {e}"),
            }
        }
        if let Ok(key) = hearth_graph::channel_scene(&scene.source) {
            declared.push(key);
        }
        let keywords = topic_keywords(query);
        let keywords: Vec<&str> = keywords.iter().map(String::as_str).collect();
        let peer = scene.peer.as_ref().map(|p| match p {
            ScenePeer::Direct(id) => Peer::Direct(id),
            ScenePeer::Group(id) => Peer::Group(id),
        });
        let features = turn_features(&TurnSituation {
            source: &scene.source,
            peer,
            local_hour: local_hour(now_ms, utc_offset_secs),
            tools: &[],
            keywords: &keywords,
        });
        let declared: Vec<&str> = declared.iter().map(String::as_str).collect();
        let entry = match graph.enter_turn_scenes(&scene.turn_id, &features, &declared, now_ms) {
            Ok(entry) => entry,
            Err(e) => {
                tracing::warn!("entering the turn's scene failed (the turn goes on): {e}");
                return None;
            }
        };
        self.scene_turns += 1;
        tracing::debug!(turn = %scene.turn_id, scenes = ?entry.keys, "turn entered its scenes");
        Some(SceneNow {
            keys: entry.keys,
            features,
        })
    }

    /// A turn's tools join its scenes once its reply is recorded (`event`, the agent's entry
    /// carrying the turn's id; [`GraphStore::note_turn_tools`]): the pass that entered them ran
    /// before the model chose a tool. Nothing for other entries, a turn without tools, or one
    /// that entered no scene; a failure is logged and the turn is not affected.
    pub(crate) fn note_turn_tools(&mut self, event: &hearth_memory::ContextEvent, now_ms: i64) {
        let Some(graph) = self.store.as_mut() else {
            return;
        };
        if event.source != hearth_memory::AGENT_SOURCE
            || event.id.is_empty()
            || event.tools_used.is_empty()
        {
            return;
        }
        let tools: Vec<&str> = event.tools_used.iter().map(String::as_str).collect();
        match graph.note_turn_tools(&event.id, &tools, now_ms) {
            Ok(keys) if !keys.is_empty() => {
                tracing::debug!(turn = %event.id, scenes = ?keys, "the turn's tools joined its scenes");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("the turn's tools did not join its scenes: {e}"),
        }
    }

    /// One distillation pass: cold items archived since the cursor, then items that gave
    /// nothing before and are due again. Returns how many items it looked at.
    fn heartbeat(&mut self, cold: &ColdContext, now_ms: i64) -> Result<usize, GraphMemoryError> {
        let Some(graph) = self.store.as_mut() else {
            return Ok(0);
        };
        let cursor = graph.distill_cursor()?;
        let store = cold.store();
        let mut ids = store.cold_ids_after(cursor, DISTILL_BATCH)?;
        ids.extend(graph.retry_due(now_ms, DISTILL_BATCH)?);
        ids.sort_unstable();
        ids.dedup();
        let mut items = Vec::with_capacity(ids.len());
        for id in ids {
            // An entry gone from cold context (dropped after a done distillation) is skipped.
            if let Some(entry) = store.cold_get(id)? {
                items.push(cold_item(&entry));
            }
        }
        if items.is_empty() {
            return Ok(0);
        }
        let report = graph.distill_with(&RuleDistiller::default(), &items, now_ms)?;
        tracing::info!(
            items = report.items,
            distilled = report.distilled,
            kept_for_retry = report.kept_for_retry,
            inserted = report.facts.inserted.len(),
            merged = report.facts.merged.len(),
            closed = report.facts.closed.len(),
            events = report.facts.events.len(),
            "graph distilled cold items"
        );
        Ok(report.items)
    }

    /// The block of a turn with no scene.
    #[cfg(test)]
    pub(crate) fn block(&self, query: &str, budget: usize, now_ms: i64) -> String {
        self.block_in(query, None, budget, now_ms)
    }

    /// The indexer's block for `query`: related facts within `budget` tokens, in a stable
    /// order (by id) so an unchanged graph gives the same bytes and the prefix caches. Facts
    /// the model fetched with `memory_recall` are left out.
    ///
    /// For a turn in `scene`, the facts of its scenes (by key, then of
    /// the emergent scenes its situation resembles; at most [`INDEXER_FACTS`]) come first under
    /// [`SCENE_FACTS_HEADER`], then the query's other facts under the block's usual header,
    /// all within `budget`, each part sorted by id. Without a scene, or when its scenes hold
    /// no fact, it is exactly the block without one.
    pub(crate) fn block_in(
        &self,
        query: &str,
        scene: Option<&SceneNow>,
        budget: usize,
        now_ms: i64,
    ) -> String {
        let Some(graph) = self.store.as_ref() else {
            return String::new();
        };
        if budget == 0 || query.trim().is_empty() {
            return String::new();
        }
        // Facts the turn's words bear on, not the speaker's every fact: they are in nearly
        // every fact, and "I" is in nearly every turn.
        let limits = RecallLimits {
            expand_speaker: false,
            ..RecallLimits::default()
        };
        let mut hits = match graph.recall_with(query, now_ms, INDEXER_FACTS, limits) {
            Ok(hits) => hits,
            Err(e) => {
                tracing::warn!("graph recall for the prompt failed: {e}");
                return String::new();
            }
        };
        hits.retain(|h| !self.recalled_set.contains(&h.id));
        let mut here = scene
            .map(|s| self.scene_hits(s, now_ms))
            .unwrap_or_default();
        if here.is_empty() {
            return facts_block(&mut hits, budget);
        }
        let seen: HashSet<FactId> = here.iter().map(|h| h.id).collect();
        hits.retain(|h| !seen.contains(&h.id));
        let first = titled_block(SCENE_FACTS_HEADER, &mut here, budget);
        // The newline between the two parts is paid for too.
        let joint = if first.is_empty() {
            0
        } else {
            estimate_tokens("\n")
        };
        let left = budget.saturating_sub(estimate_tokens(&first) + joint);
        let rest = facts_block(&mut hits, left);
        match (first.is_empty(), rest.is_empty()) {
            (_, true) => first,
            (true, false) => rest,
            (false, false) => format!("{first}\n{rest}"),
        }
    }

    /// The open facts of a turn's scenes, heaviest ref first, each once, at most
    /// [`INDEXER_FACTS`], without those the model fetched itself.
    fn scene_hits(&self, scene: &SceneNow, now_ms: i64) -> Vec<FactHit> {
        let Some(graph) = self.store.as_ref() else {
            return Vec::new();
        };
        let keys: Vec<&str> = scene.keys.iter().map(String::as_str).collect();
        match graph.scene_facts(&keys, &scene.features, INDEXER_FACTS, now_ms) {
            Ok(mut found) => {
                found.retain(|hit| !self.recalled_set.contains(&hit.id));
                found.truncate(INDEXER_FACTS);
                found
            }
            Err(e) => {
                tracing::warn!("graph recall by scene failed: {e}");
                Vec::new()
            }
        }
    }

    /// Answers one request.
    pub(crate) fn request(
        &mut self,
        req: GraphRequest,
        now_ms: i64,
    ) -> Result<Value, GraphMemoryError> {
        if let GraphRequest::Stats = req {
            return self.stats();
        }
        let unavailable = self.unavailable.clone();
        let graph = self
            .store
            .as_mut()
            .ok_or(GraphMemoryError::Unavailable(unavailable))?;
        match req {
            GraphRequest::Recall {
                query,
                k,
                for_model,
            } => {
                let hits = graph.recall(&query, now_ms, k.max(1))?;
                for hit in hits.iter().filter(|_| for_model) {
                    remember(&mut self.recalled, &mut self.recalled_set, hit.id);
                }
                Ok(Value::Array(hits.iter().map(hit_json).collect()))
            }
            GraphRequest::Forget { id } => {
                let id: FactId = id.parse().map_err(GraphMemoryError::from)?;
                let gone = graph.forget(id)?;
                // The audit trail of a user-requested deletion: what, from which sources.
                tracing::info!(
                    target: "audit",
                    id = %gone.id,
                    fact = %gone.fact,
                    sources = gone.sources,
                    cold_items = ?gone.cold_items,
                    "memory fact forgotten"
                );
                Ok(json!({
                    "id": gone.id.to_string(),
                    "removed": gone.fact,
                    "sources": gone.sources,
                    "cold_items": gone.cold_items,
                }))
            }
            GraphRequest::Why { id } => {
                let id: FactId = id.parse().map_err(GraphMemoryError::from)?;
                let why = graph.why(id)?;
                Ok(provenance_json(&why))
            }
            GraphRequest::Commit {
                subject,
                predicate,
                object,
                sentence,
                ..
            } => {
                let sentence = told_sentence(&subject, &predicate, &object, sentence);
                let statement = hearth_graph::Statement {
                    sentence,
                    facts: vec![hearth_graph::Fact {
                        subject,
                        subject_kind: "concept",
                        predicate,
                        object,
                        object_kind: "concept",
                        mode: hearth_graph::FactMode::Holds,
                        confidence: 0.9,
                        valid_from: None,
                    }],
                    events: Vec::new(),
                };
                let told = graph.tell(&[statement], &told_directly(now_ms))?;
                tell_json(&told)
            }
            GraphRequest::Edit {
                id,
                object,
                sentence,
            } => {
                let id: FactId = id.parse().map_err(GraphMemoryError::from)?;
                let sentence = if sentence.trim().is_empty() {
                    format!("corrected {id} to {object}")
                } else {
                    sentence
                };
                let told = graph.edit(id, &object, &sentence, &told_directly(now_ms))?;
                tell_json(&told)
            }
            GraphRequest::Person { name } => Ok(person_json(&graph.person(&name, now_ms)?)),
            GraphRequest::Trait { name, trait_words } => {
                let predicate = hearth_graph::predicate_from_words(&trait_words)?;
                let person = graph.person(&name, now_ms)?;
                let values: Vec<Value> = person
                    .facts
                    .iter()
                    .filter(|f| f.predicate == predicate && f.subject == person.name)
                    .map(hit_json)
                    .collect();
                Ok(json!({"name": person.name, "trait": predicate, "values": values}))
            }
            GraphRequest::People { limit } => {
                let people: Vec<Value> = graph
                    .people(limit)?
                    .into_iter()
                    .map(|(name, mentions)| json!({"name": name, "mentions": mentions}))
                    .collect();
                Ok(Value::Array(people))
            }
            GraphRequest::SetTrait {
                name,
                trait_words,
                value,
                sentence,
            } => {
                let told = graph.set_trait(
                    &name,
                    &trait_words,
                    &value,
                    &sentence,
                    &told_directly(now_ms),
                )?;
                tell_json(&told)
            }
            GraphRequest::Relate {
                a,
                relation,
                b,
                sentence,
            } => {
                let told = graph.relate(&a, &relation, &b, &sentence, &told_directly(now_ms))?;
                tell_json(&told)
            }
            GraphRequest::Network { name, depth } => {
                let links = graph.network(&name, depth)?;
                Ok(Value::Array(
                    links
                        .iter()
                        .map(|l| {
                            json!({
                                "id": l.id.to_string(),
                                "from": l.from,
                                "relation": l.predicate,
                                "to": l.to,
                                "depth": l.depth,
                            })
                        })
                        .collect(),
                ))
            }
            GraphRequest::Merge {
                source,
                target,
                keep_apart,
            } => {
                if keep_apart {
                    graph.reject_merge(&source, &target)?;
                    return Ok(json!({"kept_apart": [source, target]}));
                }
                let moved = graph.merge_entities(&source, &target)?;
                tracing::info!(target: "audit", %source, %target, moved, "memory entities merged");
                Ok(json!({"merged": source, "into": target, "relations_moved": moved}))
            }
            GraphRequest::Purge { criteria, hard } => {
                let n = if hard {
                    graph.purge(&criteria)?
                } else {
                    graph.end_matching(&criteria, now_ms)?
                };
                let mode = if hard { "hard" } else { "soft" };
                tracing::info!(target: "audit", ?criteria, mode, n, "memory facts purged");
                Ok(json!({"purged": n, "mode": mode}))
            }
            GraphRequest::Stats => unreachable!("answered above"),
        }
    }

    fn stats(&self) -> Result<Value, GraphMemoryError> {
        let Some(graph) = self.store.as_ref() else {
            return Ok(json!({"available": false, "reason": self.unavailable}));
        };
        let s = graph.stats()?;
        let scenes: Vec<Value> = graph
            .scenes(LISTED_SCENES)?
            .iter()
            .map(|sc| {
                json!({
                    "key": sc.key,
                    "origin": match sc.origin {
                        hearth_graph::SceneOrigin::Declared => "declared",
                        hearth_graph::SceneOrigin::Emergent => "emergent",
                    },
                    "strength": sc.strength,
                    "updated_ms": sc.updated_ms,
                })
            })
            .collect();
        Ok(json!({
            "available": true,
            "path": graph.path().display().to_string(),
            "entities": s.entities,
            "current": s.current,
            "past": s.past,
            "superseded": s.superseded,
            "events": s.events,
            "tombstones": s.tombstones,
            "items_done": s.items_done,
            "items_waiting": s.items_waiting,
            "cursor": graph.distill_cursor()?,
            "heartbeat_ms": duration_ms(self.interval),
            "ticks": self.ticks,
            "idle_ticks": self.idle_ticks,
            "recalled_kept_out": self.recalled.len(),
            "model": self.model.stats(graph),
            "scenes": s.scenes,
            "scene_refs": s.scene_refs,
            "recent_scenes": scenes,
            "scene_turns": self.scene_turns,
            "scene_half_life_ms": self.scene_half_life.map(duration_ms),
            "scene_refs_halved": self.refs_halved,
            "scene_refs_deleted": self.refs_deleted,
        }))
    }
}

/// The provenance sentence of a fact told directly: the words it was told in, or the fact
/// itself spelled out when there were none.
pub(crate) fn told_sentence(
    subject: &str,
    predicate: &str,
    object: &str,
    sentence: String,
) -> String {
    if sentence.trim().is_empty() {
        format!("{subject} {predicate} {object}")
    } else {
        sentence
    }
}

fn told_directly(now_ms: i64) -> FactSource {
    FactSource {
        cold_item: None,
        turn_id: format!("tool-{now_ms}"),
        said_ms: now_ms,
    }
}

fn remember(fifo: &mut VecDeque<FactId>, set: &mut HashSet<FactId>, id: FactId) {
    if !set.insert(id) {
        return;
    }
    fifo.push_back(id);
    if fifo.len() > RECALLED_FIFO
        && let Some(old) = fifo.pop_front()
    {
        set.remove(&old);
    }
}

fn status_word(status: FactStatus) -> &'static str {
    match status {
        FactStatus::Current => "current",
        FactStatus::Past => "past",
        FactStatus::Event => "event",
    }
}

fn day(ms: i64) -> String {
    hearth_memory::format_minute(ms, 0)
        .split(' ')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The indexer's block of `hits` within `budget` tokens: `Known facts (from memory):` and a
/// line per fact, sorted by id so an unchanged graph gives the same bytes and the prompt
/// prefix caches; empty when no fact fits. Also what `hearth bench recall --graph` counts.
pub fn facts_block(hits: &mut [FactHit], budget: usize) -> String {
    titled_block(FACTS_HEADER, hits, budget)
}

/// `header` and a line per fact of `hits` that fits `budget` tokens, sorted by id; empty when
/// none fits.
fn titled_block(header: &str, hits: &mut [FactHit], budget: usize) -> String {
    hits.sort_by_key(|h| h.id);
    let mut out = String::from(header);
    let mut used = estimate_tokens(header);
    let mut any = false;
    for hit in hits.iter() {
        let line = format!("\n- {}", fact_line(hit));
        let cost = estimate_tokens(&line);
        if used + cost > budget {
            continue;
        }
        used += cost;
        out.push_str(&line);
        any = true;
    }
    if any { out } else { String::new() }
}

/// One fact as the prompt shows it: `[r3] user lives_in Lisbon (current, since 2026-11-20)`.
fn fact_line(hit: &FactHit) -> String {
    let when = match (hit.status, hit.valid_to_ms) {
        (FactStatus::Past, Some(to)) => {
            format!("past, {} – {}", day(hit.valid_from_ms), day(to))
        }
        (FactStatus::Event, _) => format!("event, {}", day(hit.valid_from_ms)),
        _ => format!("current, since {}", day(hit.valid_from_ms)),
    };
    format!(
        "[{}] {} {} {} ({when})",
        hit.id, hit.subject, hit.predicate, hit.object
    )
}

fn hit_json(hit: &FactHit) -> Value {
    json!({
        "id": hit.id.to_string(),
        "subject": hit.subject,
        "predicate": hit.predicate,
        "object": hit.object,
        "status": status_word(hit.status),
        "valid_from_ms": hit.valid_from_ms,
        "valid_to_ms": hit.valid_to_ms,
        "when": hit.when_phrase,
        "sentence": hit.sentence,
        "confidence": hit.confidence,
        "mentions": hit.mentions,
        "line": fact_line(hit),
    })
}

fn person_json(person: &hearth_graph::Person) -> Value {
    json!({
        "name": person.name,
        "kind": person.kind,
        "aliases": person.aliases,
        "facts": person.facts.iter().map(hit_json).collect::<Vec<_>>(),
        "events": person.events.iter().map(hit_json).collect::<Vec<_>>(),
    })
}

fn provenance_json(why: &Provenance) -> Value {
    json!({
        "id": why.id.to_string(),
        "fact": why.fact,
        "status": status_word(why.status),
        "superseded_by": why.superseded_by.map(|id| id.to_string()),
        "sources": why.sources.iter().map(|s| json!({
            "sentence": s.sentence,
            "role": s.role,
            "cold_item": s.cold_item,
            "turn": s.turn_id,
            "said_ms": s.said_ms,
        })).collect::<Vec<_>>(),
    })
}

fn tell_json(told: &hearth_graph::TellReport) -> Result<Value, GraphMemoryError> {
    if !told.rejected.is_empty() && !told.wrote() {
        return Err(GraphMemoryError::Rejected(told.rejected.join("; ")));
    }
    let ids = |v: &[FactId]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
    Ok(json!({
        "inserted": ids(&told.inserted),
        "merged": ids(&told.merged),
        "closed": ids(&told.closed),
        "superseded": ids(&told.superseded),
        "rejected": told.rejected,
    }))
}

#[cfg(test)]
#[path = "graph_service_tests.rs"]
mod tests;
