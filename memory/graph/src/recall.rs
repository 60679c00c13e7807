//! Recall: which facts bear on a query, current and past, each with its source sentence.
//!
//! Ranked lists, fused by reciprocal rank: (1) FTS5 over the jieba tokens and CJK bigrams of
//! each relation's names and sentences, (2) the same over dated events, (3) the relations of
//! the entities the query names (and of the speaker, for "I"/"my"/"我"), those of a predicate
//! the query's words point at first, (4) dense vectors of the current embedder when one is
//! set, (5) for each span before now the query names, the facts and events of that span (its
//! time words read as cold recall reads a question: widened, in the user's zone set with
//! [`GraphStore::set_zone`]). The best hits'
//! entities then seed a BFS of depth ≤ 2 over indexed adjacency. With
//! [`RecallLimits::expand_speaker`] off, the speaker is a hub the BFS does not walk through
//! and "I" reads only the slots and time the query names.
//!
//! Cost is bounded as the graph grows: a keyword search leaves out terms that occur in more
//! than [`RecallLimits::common_df`] rows (they tell nothing apart; "live" in a million
//! lives-in facts), every list has a `LIMIT`, and the BFS reads at most `fanout` rows per
//! entity and side and `row_budget` rows in all. The dense list is the exception: it scans the
//! vectors of the current space linearly.

use std::collections::{HashMap, HashSet};

use hearth_memory::{
    DEFAULT_RRF_K, Ranked, query_tokens, question_windows, reciprocal_rank_fusion, tokens::tokenize,
};
use rusqlite::{OptionalExtension, params};

use crate::error::SqlContext;
use crate::{FactId, FactStatus, GraphError, GraphStore, USER};

/// The bounds recall works within.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecallLimits {
    /// Rows each ranked list contributes.
    pub list: usize,
    /// Top fused hits whose entities seed the BFS.
    pub seeds: usize,
    /// Rows read per entity and side (as subject, as object) at each BFS level.
    pub fanout: usize,
    /// Rows the BFS reads in all.
    pub row_budget: usize,
    /// BFS depth (≤ 2).
    pub depth: u8,
    /// A term in more rows than this is left out of keyword search.
    pub common_df: i64,
    /// Whether the speaker (`user`) is expanded like any entity a query names: all their
    /// relations listed for a first-person query, and the BFS walked through them. Off for
    /// the prompt's automatic block: the speaker is in nearly every fact, so walking through
    /// them put the user's every fact into any first-person turn ("what should I cook"
    /// recalled where they work). A slot the query names ("where do I live") and a time it
    /// names are read either way.
    pub expand_speaker: bool,
    /// The dense list keeps only relations whose cosine to the query reaches this: without a
    /// floor the nearest facts join the fusion whatever the query, so every turn would be
    /// shown facts.
    pub dense_floor: f32,
}

impl RecallLimits {
    /// The bounds [`GraphStore::recall`] uses, as a constant so callers can derive theirs.
    pub const DEFAULT: RecallLimits = RecallLimits {
        list: 64,
        seeds: 8,
        fanout: 16,
        row_budget: 256,
        depth: 2,
        common_df: 2_000,
        expand_speaker: true,
        dense_floor: 0.35,
    };
}

impl Default for RecallLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One recalled fact or event.
#[derive(Clone, Debug, PartialEq)]
pub struct FactHit {
    /// Its id, for `forget` and `why`.
    pub id: FactId,
    /// Who it is about.
    pub subject: String,
    /// The predicate (`event` for a dated event).
    pub predicate: String,
    /// The value, or what happened.
    pub object: String,
    /// Current, past, or an event.
    pub status: FactStatus,
    /// When it began to hold, or when the event happened (Unix ms).
    pub valid_from_ms: i64,
    /// When it stopped holding, or when the event's span ends.
    pub valid_to_ms: Option<i64>,
    /// The time phrase an event was dated by ("last week"); empty otherwise.
    pub when_phrase: String,
    /// The sentence it was first stated in.
    pub sentence: String,
    /// Its confidence (1 for events).
    pub confidence: f64,
    /// How often it was stated.
    pub mentions: u32,
    /// 0 when the query found it, 1–2 when reached through the graph.
    pub hop: u8,
    /// Fused score (higher first).
    pub score: f64,
}

/// Fusion keys: relations even, events odd, so one fused list holds both.
fn key(id: FactId) -> i64 {
    match id {
        FactId::Relation(r) => r * 2,
        FactId::Event(e) => e * 2 + 1,
    }
}

fn unkey(k: i64) -> FactId {
    if k % 2 == 0 {
        FactId::Relation(k / 2)
    } else {
        FactId::Event(k / 2)
    }
}

/// Words in a query that mean the speaker.
const FIRST_PERSON: &[&str] = &[
    "i", "me", "my", "mine", "myself", "i'm", "i've", "我", "我的",
];

/// Builds an FTS5 query matching any of `terms`, each quoted so operators in user text stay
/// literal.
fn fts_any(terms: &[String]) -> Option<String> {
    let quoted: Vec<String> = terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect();
    (!quoted.is_empty()).then(|| quoted.join(" OR "))
}

impl GraphStore {
    /// Up to `k` facts and events for `query`, as of `now_ms`, with [`RecallLimits::default`].
    pub fn recall(&self, query: &str, now_ms: i64, k: usize) -> Result<Vec<FactHit>, GraphError> {
        self.recall_with(query, now_ms, k, RecallLimits::default())
    }

    /// [`GraphStore::recall`] within explicit bounds.
    pub fn recall_with(
        &self,
        query: &str,
        now_ms: i64,
        k: usize,
        limits: RecallLimits,
    ) -> Result<Vec<FactHit>, GraphError> {
        const OP: &str = "recall";
        let terms: Vec<String> = query_tokens(query)
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let mut lists: Vec<(Vec<i64>, f64)> = Vec::new();

        lists.push((
            self.keyword("relation_fts", "relation_vocab", &terms, &limits)?,
            1.0,
        ));
        lists.push((
            self.keyword("event_fts", "event_vocab", &terms, &limits)?,
            1.0,
        ));

        let mut entities = self.keyword_entities(&terms, &limits)?;
        let lower = query.to_lowercase();
        let first_person = lower
            .split(|c: char| !c.is_alphanumeric() && c != '\'')
            .any(|w| FIRST_PERSON.contains(&w))
            || query.contains('我');
        // Looked up only when it is used: named by "I", or kept out of the walk.
        let speaker = if first_person || !limits.expand_speaker {
            self.entity_id(USER)?
        } else {
            None
        };
        // Whose named slots and time the query asks about: the speaker too for "I".
        let mut named = entities.clone();
        if first_person
            && let Some(user) = speaker
            && !named.contains(&user)
        {
            named.insert(0, user);
        }
        // The speaker is walked and listed whole only when expanded.
        let hub = if limits.expand_speaker {
            entities = named.clone();
            None
        } else {
            speaker
        };
        let predicates = self.predicates_named(query)?;
        lists.push((
            self.entity_slots(&named, &entities, &predicates, &limits)?,
            1.0,
        ));
        if let Some(dense) = self.dense(query, &limits)? {
            lists.push((dense, 1.0));
        }
        // Read as cold recall reads a question: widened, in the user's zone, and "today" or
        // "on Monday" (the present, a habit) name no past span to look in.
        for window in question_windows(query, now_ms, self.zone.offset_at(now_ms)) {
            lists.push((
                self.in_window(&named, hub, window.start_ms, window.end_ms, &limits)?,
                1.0,
            ));
        }

        let ranked: Vec<Ranked<'_>> = lists
            .iter()
            .filter(|(ids, _)| !ids.is_empty())
            .map(|(ids, weight)| Ranked {
                ids,
                weight: *weight,
            })
            .collect();
        let fused = reciprocal_rank_fusion(&ranked, DEFAULT_RRF_K);
        let mut scores: HashMap<i64, (f64, u8)> =
            fused.iter().map(|f| (f.id, (f.score, 0))).collect();

        // BFS from the entities of the best hits and the named entities.
        let mut frontier: Vec<(i64, f64)> = entities
            .iter()
            .map(|&e| (e, fused.first().map_or(1.0, |f| f.score)))
            .collect();
        for f in fused.iter().take(limits.seeds) {
            for e in self.endpoints(unkey(f.id))? {
                frontier.push((e, f.score));
            }
        }
        // The dated events that began or ended a hit come with it: "moved to Lisbon, last week"
        // answers "where do I live" as well as the fact does.
        let mut linked = self
            .conn
            .prepare_cached("SELECT id FROM events WHERE relation_id = ?1 LIMIT 4")
            .ctx(OP, &self.path)?;
        for f in fused.iter().take(limits.list) {
            let FactId::Relation(r) = unkey(f.id) else {
                continue;
            };
            for e in linked
                .query_map([r], |row| row.get::<_, i64>(0))
                .ctx(OP, &self.path)?
            {
                let k = key(FactId::Event(e.ctx(OP, &self.path)?));
                let entry = scores.entry(k).or_insert((0.0, 0));
                entry.0 = entry.0.max(f.score * 0.9);
            }
        }
        let mut visited: HashSet<i64> = HashSet::new();
        let mut budget = limits.row_budget;
        let fanout = i64::try_from(limits.fanout).unwrap_or(i64::MAX);
        for hop in 1..=limits.depth.min(2) {
            let mut next: Vec<(i64, f64)> = Vec::new();
            for (entity, parent) in std::mem::take(&mut frontier) {
                if budget == 0 || !visited.insert(entity) || hub == Some(entity) {
                    continue;
                }
                let score = parent * 0.5f64.powi(i32::from(hop));
                for side in ["subject_id", "object_id"] {
                    let rows: Vec<(i64, i64, i64)> = self
                        .conn
                        .prepare_cached(&format!(
                            "SELECT id, subject_id, object_id FROM relations WHERE {side} = ?1 \
                             AND superseded_ms IS NULL ORDER BY id DESC LIMIT +?2"
                        ))
                        .ctx(OP, &self.path)?
                        .query_map(params![entity, fanout], |r| {
                            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                        })
                        .ctx(OP, &self.path)?
                        .collect::<Result<_, _>>()
                        .ctx(OP, &self.path)?;
                    for (id, s, o) in rows {
                        if budget == 0 {
                            break;
                        }
                        budget -= 1;
                        let k = key(FactId::Relation(id));
                        scores.entry(k).or_insert((score, hop));
                        for end in [s, o] {
                            if !visited.contains(&end) {
                                next.push((end, score));
                            }
                        }
                    }
                }
            }
            frontier = next;
        }

        let mut ordered: Vec<(i64, f64, u8)> =
            scores.into_iter().map(|(k, (s, h))| (k, s, h)).collect();
        ordered
            .sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)).then(b.0.cmp(&a.0)));
        let mut hits = Vec::with_capacity(k);
        for (k_, score, hop) in ordered {
            if hits.len() == k {
                break;
            }
            if let Some(hit) = self.hit(unkey(k_), now_ms, score, hop)? {
                hits.push(hit);
            }
        }
        Ok(hits)
    }

    /// The plain FTS5 query recall is measured against: bm25 over every term, no pruning,
    /// no fusion, no graph.
    pub fn keyword_baseline(&self, query: &str, k: usize) -> Result<Vec<FactId>, GraphError> {
        let terms: Vec<String> = query_tokens(query)
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let Some(q) = fts_any(&terms) else {
            return Ok(Vec::new());
        };
        self.conn
            .prepare_cached(
                "SELECT rowid FROM relation_fts WHERE relation_fts MATCH ?1 ORDER BY rank LIMIT +?2",
            )
            .ctx("keyword_baseline", &self.path)?
            .query_map(params![q, i64::try_from(k).unwrap_or(i64::MAX)], |r| {
                r.get(0).map(FactId::Relation)
            })
            .ctx("keyword_baseline", &self.path)?
            .collect::<Result<_, _>>()
            .ctx("keyword_baseline", &self.path)
    }

    /// Terms of `terms` rare enough in `vocab` to rank by; when all are common, the rarest.
    fn discriminating(
        &self,
        vocab: &str,
        terms: &[String],
        limits: &RecallLimits,
    ) -> Result<(Vec<String>, bool), GraphError> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT doc FROM {vocab} WHERE term = ?1"))
            .ctx("recall_vocab", &self.path)?;
        let mut with_df = Vec::new();
        for t in terms {
            let df: Option<i64> = stmt
                .query_row([t], |r| r.get(0))
                .optional()
                .ctx("recall_vocab", &self.path)?;
            if let Some(df) = df {
                with_df.push((t.clone(), df));
            }
        }
        let rare: Vec<String> = with_df
            .iter()
            .filter(|(_, df)| *df <= limits.common_df)
            .map(|(t, _)| t.clone())
            .collect();
        if !rare.is_empty() {
            return Ok((rare, true));
        }
        Ok((
            with_df
                .into_iter()
                .min_by_key(|(_, df)| *df)
                .map(|(t, _)| t)
                .into_iter()
                .collect(),
            false,
        ))
    }

    /// Row ids of `fts` matching the query's discriminating terms: by bm25 when some are
    /// rare, newest first (an early-terminating rowid scan) when all are common.
    fn keyword(
        &self,
        fts: &str,
        vocab: &str,
        terms: &[String],
        limits: &RecallLimits,
    ) -> Result<Vec<i64>, GraphError> {
        const OP: &str = "recall_keyword";
        let (terms, rare) = self.discriminating(vocab, terms, limits)?;
        let Some(q) = fts_any(&terms) else {
            return Ok(Vec::new());
        };
        let order = if rare { "rank" } else { "rowid DESC" };
        let (table, live) = match fts {
            "relation_fts" => ("relations", "AND t.superseded_ms IS NULL"),
            _ => ("events", ""),
        };
        let sql = format!(
            "SELECT f.rowid FROM {fts} f JOIN {table} t ON t.id = f.rowid \
             WHERE {fts} MATCH ?1 {live} ORDER BY f.{order} LIMIT +?2"
        );
        let kind = if table == "relations" {
            FactId::Relation
        } else {
            FactId::Event
        };
        self.conn
            .prepare_cached(&sql)
            .ctx(OP, &self.path)?
            .query_map(
                params![q, i64::try_from(limits.list).unwrap_or(i64::MAX)],
                |r| r.get(0),
            )
            .ctx(OP, &self.path)?
            .map(|r| r.map(|id| key(kind(id))))
            .collect::<Result<_, _>>()
            .ctx(OP, &self.path)
    }

    /// Entities whose names the query's terms match, best first.
    fn keyword_entities(
        &self,
        terms: &[String],
        limits: &RecallLimits,
    ) -> Result<Vec<i64>, GraphError> {
        const OP: &str = "recall_entities";
        let (terms, _) = self.discriminating("entity_vocab", terms, limits)?;
        let Some(q) = fts_any(&terms) else {
            return Ok(Vec::new());
        };
        self.conn
            .prepare_cached(
                "SELECT rowid FROM entity_fts WHERE entity_fts MATCH ?1 ORDER BY rank LIMIT +?2",
            )
            .ctx(OP, &self.path)?
            .query_map(
                params![q, i64::try_from(limits.seeds).unwrap_or(i64::MAX)],
                |r| r.get(0),
            )
            .ctx(OP, &self.path)?
            .collect::<Result<_, _>>()
            .ctx(OP, &self.path)
    }

    fn entity_id(&self, name: &str) -> Result<Option<i64>, GraphError> {
        self.conn
            .query_row("SELECT id FROM entities WHERE norm = ?1", [name], |r| {
                r.get(0)
            })
            .optional()
            .ctx("recall", &self.path)
    }

    /// Predicates whose words the query uses ("live" → lives_in, "住" → lives_in).
    fn predicates_named(&self, query: &str) -> Result<Vec<String>, GraphError> {
        const OP: &str = "recall_predicates";
        let words: HashSet<String> = tokenize(query).into_iter().collect();
        let lower = query.to_lowercase();
        let rows: Vec<(String, String)> = self
            .conn
            .prepare_cached("SELECT name, words FROM predicates")
            .ctx(OP, &self.path)?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .ctx(OP, &self.path)?
            .collect::<Result<_, _>>()
            .ctx(OP, &self.path)?;
        Ok(rows
            .into_iter()
            .filter(|(_, w)| {
                w.split_whitespace().any(|w| {
                    if w.is_ascii() {
                        w.len() > 2 && words.contains(w)
                    } else {
                        lower.contains(w)
                    }
                })
            })
            .map(|(n, _)| n)
            .collect())
    }

    /// Relations of the named entities: those of the named predicates first (all of them,
    /// current and past, newest first, for each of `named`), then the newest others (of
    /// each of `listed`).
    fn entity_slots(
        &self,
        named: &[i64],
        listed: &[i64],
        predicates: &[String],
        limits: &RecallLimits,
    ) -> Result<Vec<i64>, GraphError> {
        const OP: &str = "recall_slots";
        let limit = i64::try_from(limits.list).unwrap_or(i64::MAX);
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut slot = self
            .conn
            .prepare_cached(
                "SELECT id FROM relations WHERE subject_id = ?1 AND predicate = ?2 \
                 AND superseded_ms IS NULL ORDER BY id DESC LIMIT +?3",
            )
            .ctx(OP, &self.path)?;
        for &e in named.iter().take(limits.seeds) {
            for p in predicates {
                for id in slot
                    .query_map(params![e, p, limit], |r| r.get::<_, i64>(0))
                    .ctx(OP, &self.path)?
                {
                    let k = key(FactId::Relation(id.ctx(OP, &self.path)?));
                    if out.len() < limits.list && seen.insert(k) {
                        out.push(k);
                    }
                }
            }
        }
        // Each side on its own index with its own LIMIT: a UNION would read a hub's every row
        // before sorting them.
        for side in ["subject_id", "object_id"] {
            let mut any = self
                .conn
                .prepare_cached(&format!(
                    "SELECT id FROM relations WHERE {side} = ?1 AND superseded_ms IS NULL \
                     ORDER BY id DESC LIMIT +?2"
                ))
                .ctx(OP, &self.path)?;
            for &e in listed.iter().take(limits.seeds) {
                for id in any
                    .query_map(params![e, limit], |r| r.get::<_, i64>(0))
                    .ctx(OP, &self.path)?
                {
                    let k = key(FactId::Relation(id.ctx(OP, &self.path)?));
                    if out.len() < limits.list && seen.insert(k) {
                        out.push(k);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Facts of the named entities that held during `[start, end)`, and events dated in it.
    ///
    /// For `hub` (the speaker when not expanded), only the facts that began or ended in it:
    /// every current fact of the speaker held "today".
    fn in_window(
        &self,
        entities: &[i64],
        hub: Option<i64>,
        start: i64,
        end: i64,
        limits: &RecallLimits,
    ) -> Result<Vec<i64>, GraphError> {
        const OP: &str = "recall_window";
        let limit = i64::try_from(limits.list).unwrap_or(i64::MAX);
        let mut out = Vec::new();
        let mut held = self
            .conn
            .prepare_cached(
                "SELECT id FROM relations WHERE subject_id = ?1 AND superseded_ms IS NULL \
                 AND valid_from_ms < ?3 AND (valid_to_ms IS NULL OR valid_to_ms > ?2) \
                 ORDER BY id DESC LIMIT +?4",
            )
            .ctx(OP, &self.path)?;
        let mut changed = self
            .conn
            .prepare_cached(
                "SELECT id FROM relations WHERE subject_id = ?1 AND superseded_ms IS NULL \
                 AND ((valid_from_ms >= ?2 AND valid_from_ms < ?3) \
                      OR (valid_to_ms >= ?2 AND valid_to_ms < ?3)) \
                 ORDER BY id DESC LIMIT +?4",
            )
            .ctx(OP, &self.path)?;
        for &e in entities.iter().take(limits.seeds) {
            let stmt = if hub == Some(e) {
                &mut changed
            } else {
                &mut held
            };
            for id in stmt
                .query_map(params![e, start, end, limit], |r| r.get::<_, i64>(0))
                .ctx(OP, &self.path)?
            {
                out.push(key(FactId::Relation(id.ctx(OP, &self.path)?)));
            }
        }
        let mut events = self
            .conn
            .prepare_cached("SELECT id FROM events WHERE start_ms >= ?1 AND start_ms < ?2 ORDER BY start_ms DESC LIMIT +?3")
            .ctx(OP, &self.path)?;
        for id in events
            .query_map(params![start, end, limit], |r| r.get::<_, i64>(0))
            .ctx(OP, &self.path)?
        {
            out.push(key(FactId::Event(id.ctx(OP, &self.path)?)));
        }
        Ok(out)
    }

    /// Relations nearest the query in the current embedder's space (a linear scan).
    fn dense(&self, query: &str, limits: &RecallLimits) -> Result<Option<Vec<i64>>, GraphError> {
        const OP: &str = "recall_dense";
        let Some(embedder) = &self.embedder else {
            return Ok(None);
        };
        let q = embedder.embed_query(query).map_err(|e| GraphError::Embed {
            op: OP,
            detail: e.to_string(),
        })?;
        let fingerprint = embedder.fingerprint().to_string();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT v.relation_id, v.vector FROM relation_vectors v JOIN relations r ON r.id = v.relation_id \
                 WHERE v.fingerprint = ?1 AND r.superseded_ms IS NULL",
            )
            .ctx(OP, &self.path)?;
        let mut scored: Vec<(f32, i64)> = Vec::new();
        let mut vector: Vec<f32> = Vec::with_capacity(q.len());
        let rows = stmt
            .query_map([fingerprint], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .ctx(OP, &self.path)?;
        for row in rows {
            let (id, blob) = row.ctx(OP, &self.path)?;
            if blob.len() != q.len() * 4 {
                continue;
            }
            vector.clear();
            vector.extend(
                blob.chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
            let dot = hearth_memory::simd::dot(&vector, &q);
            if dot >= limits.dense_floor {
                scored.push((dot, id));
            }
        }
        scored.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(limits.list);
        Ok(Some(
            scored
                .into_iter()
                .map(|(_, id)| key(FactId::Relation(id)))
                .collect(),
        ))
    }

    fn endpoints(&self, id: FactId) -> Result<Vec<i64>, GraphError> {
        let found = match id {
            FactId::Relation(r) => self.conn.query_row(
                "SELECT subject_id, object_id FROM relations WHERE id = ?1",
                [r],
                |row| Ok(vec![row.get(0)?, row.get(1)?]),
            ),
            FactId::Event(e) => {
                self.conn
                    .query_row("SELECT subject_id FROM events WHERE id = ?1", [e], |row| {
                        Ok(vec![row.get(0)?])
                    })
            }
        };
        Ok(found
            .optional()
            .ctx("recall_endpoints", &self.path)?
            .unwrap_or_default())
    }

    /// The hit for `id` as of `now_ms`; `None` if it is superseded.
    pub(crate) fn hit(
        &self,
        id: FactId,
        now_ms: i64,
        score: f64,
        hop: u8,
    ) -> Result<Option<FactHit>, GraphError> {
        const OP: &str = "recall_hit";
        let found = match id {
            FactId::Relation(r) => self.conn.query_row(
                "SELECT e1.name, r.predicate, e2.name, r.valid_from_ms, r.valid_to_ms, \
                 (SELECT s.text FROM provenance p JOIN sentences s ON s.id = p.sentence_id \
                  WHERE p.relation_id = r.id AND p.role != 'ended' ORDER BY p.said_ms, p.id LIMIT 1), \
                 r.confidence, r.mentions, r.superseded_ms IS NOT NULL \
                 FROM relations r JOIN entities e1 ON e1.id = r.subject_id \
                 JOIN entities e2 ON e2.id = r.object_id WHERE r.id = ?1",
                [r],
                |row| {
                    let valid_to: Option<i64> = row.get(4)?;
                    let superseded: bool = row.get(8)?;
                    if superseded {
                        return Ok(None);
                    }
                    Ok(Some(FactHit {
                        id,
                        subject: row.get(0)?,
                        predicate: row.get(1)?,
                        object: row.get(2)?,
                        status: if valid_to.is_some_and(|t| t <= now_ms) { FactStatus::Past } else { FactStatus::Current },
                        valid_from_ms: row.get(3)?,
                        valid_to_ms: valid_to,
                        when_phrase: String::new(),
                        sentence: row.get::<_, Option<String>>(5)?.unwrap_or_default(),
                        confidence: row.get(6)?,
                        mentions: row.get::<_, i64>(7)?.clamp(1, i64::from(u32::MAX)) as u32,
                        hop,
                        score,
                    }))
                },
            ),
            FactId::Event(e) => self.conn.query_row(
                "SELECT e1.name, ev.what, ev.start_ms, ev.end_ms, ev.phrase, s.text FROM events ev \
                 JOIN entities e1 ON e1.id = ev.subject_id JOIN sentences s ON s.id = ev.sentence_id \
                 WHERE ev.id = ?1",
                [e],
                |row| {
                    Ok(Some(FactHit {
                        id,
                        subject: row.get(0)?,
                        predicate: "event".to_owned(),
                        object: row.get(1)?,
                        status: FactStatus::Event,
                        valid_from_ms: row.get(2)?,
                        valid_to_ms: Some(row.get(3)?),
                        when_phrase: row.get(4)?,
                        sentence: row.get(5)?,
                        confidence: 1.0,
                        mentions: 1,
                        hop,
                        score,
                    }))
                },
            ),
        };
        Ok(found.optional().ctx(OP, &self.path)?.flatten())
    }
}
