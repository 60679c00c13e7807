//! The graph tools' and the `hearth memory` commands' requests, and their answers as JSON.

use super::block::fact_line;
use super::*;

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

impl GraphRequest {
    /// Whether the request may forget facts, whose words then leave the memory store too (a
    /// soft purge forgets a plan that has not begun).
    pub(crate) fn forgets(&self) -> bool {
        matches!(self, Self::Forget { .. } | Self::Purge { .. })
    }
}

impl GraphMemory {
    /// Answers one request.
    /// A fact it tells comes from the turn `turn` (empty: from no turn of the memory store).
    #[cfg(test)]
    pub(crate) fn request(
        &mut self,
        req: GraphRequest,
        turn: &str,
        now_ms: i64,
    ) -> Result<Value, GraphMemoryError> {
        self.request_shown(req, turn, &mut |_, _| Vec::new(), now_ms)
    }

    /// [`request`](Self::request); `shown_in` names the turns whose reply memory showed a fact
    /// it forgets (by id or by a hard purge), whose repetitions of its value go too (see
    /// [`turns_shown`]).
    pub(crate) fn request_shown(
        &mut self,
        req: GraphRequest,
        turn: &str,
        shown_in: hearth_graph::ShownIn<'_>,
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
                let zone = graph.zone();
                Ok(Value::Array(
                    hits.iter().map(|hit| hit_json(hit, zone)).collect(),
                ))
            }
            GraphRequest::Forget { id } => {
                let id: FactId = id.parse().map_err(GraphMemoryError::from)?;
                let gone = graph.forget_shown(id, shown_in)?;
                // The audit trail of a user-requested deletion: what, from which sources.
                tracing::info!(
                    target: "audit",
                    id = %gone.id,
                    fact = %gone.fact,
                    sources = gone.sources,
                    cold_items = ?gone.cold_items,
                    "memory fact forgotten"
                );
                let still: Vec<Value> = gone
                    .still_said
                    .iter()
                    .map(|s| {
                        let facts: Vec<String> = s.facts.iter().map(ToString::to_string).collect();
                        json!({"sentence": s.sentence, "source_of": facts})
                    })
                    .collect();
                Ok(json!({
                    "id": gone.id.to_string(),
                    "removed": gone.fact,
                    "sources": gone.sources,
                    "cold_items": gone.cold_items,
                    "sentences_kept": still,
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
                let told = graph.tell(&[statement], &told_directly(turn, now_ms))?;
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
                let told = graph.edit(id, &object, &sentence, &told_directly(turn, now_ms))?;
                tell_json(&told)
            }
            GraphRequest::Person { name } => {
                Ok(person_json(&graph.person(&name, now_ms)?, graph.zone()))
            }
            GraphRequest::Trait { name, trait_words } => {
                let predicate = hearth_graph::predicate_from_words(&trait_words)?;
                let person = graph.person(&name, now_ms)?;
                let values: Vec<Value> = person
                    .facts
                    .iter()
                    .filter(|f| f.predicate == predicate && f.subject == person.name)
                    .map(|hit| hit_json(hit, graph.zone()))
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
                    &told_directly(turn, now_ms),
                )?;
                tell_json(&told)
            }
            GraphRequest::Relate {
                a,
                relation,
                b,
                sentence,
            } => {
                let told =
                    graph.relate(&a, &relation, &b, &sentence, &told_directly(turn, now_ms))?;
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
                    graph.purge_shown(&criteria, shown_in)?.len()
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

/// The source of a fact a tool tells while serving `turn` (a name of its own when it serves
/// no turn: a plugin's or the CLI's request).
fn told_directly(turn: &str, now_ms: i64) -> FactSource {
    FactSource {
        cold_item: None,
        turn_id: if turn.is_empty() {
            format!("tool-{now_ms}")
        } else {
            turn.to_owned()
        },
        said_ms: now_ms,
    }
}

fn status_word(status: FactStatus) -> &'static str {
    match status {
        FactStatus::Current => "current",
        FactStatus::Past => "past",
        FactStatus::Event => "event",
    }
}

/// A hit as the tools return it, its line's days in the user's `zone`.
fn hit_json(hit: &FactHit, zone: &LocalZone) -> Value {
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
        "line": fact_line(hit, zone),
    })
}

fn person_json(person: &hearth_graph::Person, zone: &LocalZone) -> Value {
    let hits =
        |hits: &[FactHit]| -> Vec<Value> { hits.iter().map(|hit| hit_json(hit, zone)).collect() };
    json!({
        "name": person.name,
        "kind": person.kind,
        "aliases": person.aliases,
        "facts": hits(&person.facts),
        "events": hits(&person.events),
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

/// The turns whose reply memory showed fact `id` — the fact itself in the indexer's block, or
/// one of the remembered turns `cold_items` it came from in the recall block — from what the
/// memory store keeps of each reply (`ContextEvent::shown`). A store that cannot be read is
/// logged, and the forget goes on without them.
pub(crate) fn turns_shown(
    cold: &hearth_memory::ColdContext,
    id: FactId,
    cold_items: &[i64],
) -> Vec<String> {
    let mut ids = vec![id.to_string()];
    ids.extend(
        cold_items
            .iter()
            .map(|c| format!("{}{c}", crate::recalled::ENTRY_PREFIX)),
    );
    cold.store().turns_shown(&ids).unwrap_or_else(|e| {
        tracing::warn!("the turns shown {id} were not found: {e}");
        Vec::new()
    })
}
