//! L3 in the kernel: the graph file's one owner, its distillation heartbeat, the indexer block
//! and the requests of the graph tools and the `hearth memory` commands.
//!
//! The [`GraphMemory`] lives inside the memory service on the store's owner thread, so one
//! thread opens `graph.db` and every write to it is serialised with the cold context it reads.
//! A graph file that cannot be opened (foreign, corrupt, from a newer Hearth) is logged as an
//! error and left untouched; the daemon runs without L3 and every graph request says why.

mod block;
mod request;
mod unsaid;

pub use block::{FactsBlock, facts_block};
pub use request::GraphRequest;
pub(crate) use request::{told_sentence, turns_shown};
use unsaid::Unsaying;

use crate::GraphMemoryError;
use crate::input::InputEvent;
use crate::model_distill::{ModelDistill, ModelDistillSettings, cold_item};
use crate::turn_scene::{ScenePeer, TurnScene, local_hour};
use hearth_engine::{LocalZone, Sink, duration_ms};
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
/// How the indexer recalls: the facts a turn's words bear on, not the speaker's every fact
/// (they are in nearly every fact, and "I" is in nearly every turn).
pub const INDEXER_LIMITS: RecallLimits = RecallLimits {
    expand_speaker: false,
    ..RecallLimits::DEFAULT
};
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
    /// Forgotten facts' words on their way out of `memory.db`.
    unsaying: Unsaying,
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
    /// model distiller's consolidation tasks to the kernel (`None`: rules only). Time words,
    /// in what the user says and in what they ask, are reckoned in their `zone`.
    pub(crate) fn open(
        settings: Option<&GraphSettings>,
        zone: LocalZone,
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
                Ok(mut store) => {
                    store.set_zone(zone);
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
            unsaying: Unsaying::at_start(),
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
                items.push(cold_item(&entry, graph));
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

#[cfg(test)]
mod tests;
