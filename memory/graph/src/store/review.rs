//! Upkeep the model decides on: which entities may be one (merge candidates), merging them,
//! remembering a "do not merge", and which relations to show it for review.

use std::collections::HashSet;

use rusqlite::{OptionalExtension, params};

use super::GraphStore;
use super::entities::find_entity;
use super::model::FactId;
use super::now_ms;
use crate::GraphError;
use crate::error::SqlContext;
use crate::name::{fact_key, normal_form, validate_name};

/// Names more similar than this are proposed for merging.
pub const MERGE_THRESHOLD: f64 = 0.75;
/// At most this many merge proposals per tick: each costs a model call.
pub const MERGES_PER_TICK: usize = 5;
/// How many of the most-mentioned entities are compared pairwise.
const MERGE_POOL: i64 = 50;
/// How many ticks a "do not merge" answer keeps a pair from being proposed again.
pub const REJECTION_ROUNDS: i64 = 12;

/// Two entities that may be one.
#[derive(Clone, Debug, PartialEq)]
pub struct MergeCandidate {
    /// The less-mentioned name (merged into `target` if the model agrees).
    pub source: String,
    /// The more-mentioned name.
    pub target: String,
    /// The similarity that proposed them.
    pub similarity: f64,
}

/// A relation to show the model with its source sentence.
#[derive(Clone, Debug, PartialEq)]
pub struct ReviewItem {
    /// The relation.
    pub id: FactId,
    /// `Subject predicate Object`.
    pub fact: String,
    /// Its first source sentence.
    pub sentence: String,
    /// Its confidence.
    pub confidence: f64,
}

/// Jaccard similarity of the character-bigram sets of `a` and `b` (identical strings: 1; a
/// one-character string matches only itself).
pub fn bigram_jaccard(a: &str, b: &str) -> f64 {
    if a == b {
        return 1.0;
    }
    let bigrams = |s: &str| -> HashSet<(char, char)> {
        let chars: Vec<char> = s.chars().collect();
        chars.windows(2).map(|w| (w[0], w[1])).collect()
    };
    let (x, y) = (bigrams(a), bigrams(b));
    if x.is_empty() || y.is_empty() {
        return 0.0;
    }
    let shared = x.intersection(&y).count();
    shared as f64 / (x.len() + y.len() - shared) as f64
}

fn pair_key(a: &str, b: &str) -> String {
    let (a, b) = (normal_form(a), normal_form(b));
    if a <= b {
        format!("{a}||{b}")
    } else {
        format!("{b}||{a}")
    }
}

impl GraphStore {
    /// Up to [`MERGES_PER_TICK`] pairs among the most-mentioned entities whose names are more
    /// similar than [`MERGE_THRESHOLD`] (bigram Jaccard, or the cosine of the name vectors when
    /// an embedder is set). A rejected pair spends one of its remaining rounds instead.
    pub fn merge_candidates(&mut self) -> Result<Vec<MergeCandidate>, GraphError> {
        const OP: &str = "merge_candidates";
        let path = self.path.clone();
        let names: Vec<(String, i64)> = self
            .conn
            .prepare_cached(
                "SELECT name, mentions FROM entities ORDER BY mentions DESC, id LIMIT +?1",
            )
            .ctx(OP, &path)?
            .query_map([MERGE_POOL], |r| Ok((r.get(0)?, r.get(1)?)))
            .ctx(OP, &path)?
            .collect::<Result<_, _>>()
            .ctx(OP, &path)?;
        let vectors = match &self.embedder {
            Some(e) => {
                let refs: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
                // A batch of the wrong shape is no batch: the names are compared by letters.
                e.embed_batch(&refs)
                    .ok()
                    .filter(|v| v.len() == refs.len() && v.iter().all(|row| row.len() == e.dim()))
            }
            None => None,
        };
        let tx = self.conn.transaction().ctx(OP, &path)?;
        let mut out = Vec::new();
        'pairs: for i in 0..names.len() {
            for j in i + 1..names.len() {
                if out.len() >= MERGES_PER_TICK {
                    break 'pairs;
                }
                let (a, b) = (&names[i].0, &names[j].0);
                let mut similarity = bigram_jaccard(&normal_form(a), &normal_form(b));
                if let Some(v) = &vectors {
                    let cos = hearth_memory::simd::dot(&v[i], &v[j]);
                    similarity = similarity.max(f64::from(cos));
                }
                if similarity <= MERGE_THRESHOLD {
                    continue;
                }
                let key = pair_key(a, b);
                let left: Option<i64> = tx
                    .query_row(
                        "SELECT rounds_left FROM merge_rejections WHERE pair = ?1",
                        [&key],
                        |r| r.get(0),
                    )
                    .optional()
                    .ctx(OP, &path)?;
                match left {
                    Some(1) => {
                        tx.execute("DELETE FROM merge_rejections WHERE pair = ?1", [&key])
                            .ctx(OP, &path)?;
                    }
                    Some(_) => {
                        tx.execute(
                            "UPDATE merge_rejections SET rounds_left = rounds_left - 1 WHERE pair = ?1",
                            [&key],
                        )
                        .ctx(OP, &path)?;
                    }
                    None => out.push(MergeCandidate {
                        source: b.clone(),
                        target: a.clone(),
                        similarity,
                    }),
                }
            }
        }
        tx.commit().ctx(OP, &path)?;
        Ok(out)
    }

    /// Remembers that `a` and `b` are different things for [`REJECTION_ROUNDS`] ticks.
    pub fn reject_merge(&mut self, a: &str, b: &str) -> Result<(), GraphError> {
        self.conn
            .execute(
                "INSERT INTO merge_rejections (pair, rounds_left) VALUES (?1, ?2) \
                 ON CONFLICT (pair) DO UPDATE SET rounds_left = excluded.rounds_left",
                params![pair_key(a, b), REJECTION_ROUNDS],
            )
            .ctx("reject_merge", &self.path)
            .map(drop)
    }

    /// Merges entity `source` into `target`: its relations and events point at `target` (an
    /// open relation that now duplicates one of `target`'s is folded into it, provenance
    /// kept), a relation that would link `target` to itself is dropped, `source`'s name
    /// becomes an alias. Returns the number of relations redirected.
    pub fn merge_entities(&mut self, source: &str, target: &str) -> Result<usize, GraphError> {
        const OP: &str = "merge_entities";
        let path = self.path.clone();
        let tx = self.conn.transaction().ctx(OP, &path)?;
        let lookup = |name: &str| -> Result<(i64, String), GraphError> {
            let display = validate_name(name)?;
            let id = find_entity(&tx, &path, &normal_form(&display))?.ok_or_else(|| {
                GraphError::NotFound {
                    id: display.clone(),
                }
            })?;
            let name: String = tx
                .query_row("SELECT name FROM entities WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .ctx(OP, &path)?;
            Ok((id, name))
        };
        let (src, src_name) = lookup(source)?;
        let (dst, dst_name) = lookup(target)?;
        if src == dst {
            return Err(GraphError::InvalidName {
                name: source.to_owned(),
                reason: "cannot merge an entity with itself",
            });
        }
        type Moved = (i64, i64, String, i64, bool);
        let moved: Vec<Moved> = tx
            .prepare("SELECT id, subject_id, predicate, object_id, valid_to_ms IS NULL AND superseded_ms IS NULL \
                      FROM relations WHERE subject_id = ?1 OR object_id = ?1")
            .ctx(OP, &path)?
            .query_map([src], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
            .ctx(OP, &path)?
            .collect::<Result<_, _>>()
            .ctx(OP, &path)?;
        let name_of = |id: i64| -> Result<String, GraphError> {
            tx.query_row("SELECT name FROM entities WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .ctx(OP, &path)
        };
        let mut redirected = 0;
        for (id, s, p, o, open) in moved {
            let (s, o) = (
                if s == src { dst } else { s },
                if o == src { dst } else { o },
            );
            if s == o {
                tx.execute("DELETE FROM relations WHERE id = ?1", [id])
                    .ctx(OP, &path)?;
                continue;
            }
            let twin: Option<i64> = if open {
                tx.query_row(
                    "SELECT id FROM relations WHERE subject_id = ?1 AND predicate = ?2 AND object_id = ?3 \
                     AND valid_to_ms IS NULL AND superseded_ms IS NULL AND id != ?4",
                    params![s, p, o, id],
                    |r| r.get(0),
                )
                .optional()
                .ctx(OP, &path)?
            } else {
                None
            };
            if let Some(twin) = twin {
                for sql in [
                    "UPDATE OR IGNORE provenance SET relation_id = ?2 WHERE relation_id = ?1",
                    "UPDATE relations SET mentions = mentions + (SELECT mentions FROM relations WHERE id = ?1), \
                     confidence = max(confidence, (SELECT confidence FROM relations WHERE id = ?1)) WHERE id = ?2",
                    "UPDATE events SET relation_id = ?2 WHERE relation_id = ?1",
                ] {
                    tx.execute(sql, params![id, twin]).ctx(OP, &path)?;
                }
                crate::scene::move_relation_refs(&tx, &path, id, twin)?;
                tx.execute("DELETE FROM relations WHERE id = ?1", [id])
                    .ctx(OP, &path)?;
            } else {
                let key = fact_key(&name_of(s)?, &p, &name_of(o)?);
                tx.execute(
                    "UPDATE relations SET subject_id = ?2, object_id = ?3, fact_key = ?4 WHERE id = ?1",
                    params![id, s, o, key],
                )
                .ctx(OP, &path)?;
            }
            redirected += 1;
        }
        for sql in [
            "UPDATE events SET subject_id = ?2 WHERE subject_id = ?1",
            "UPDATE aliases SET entity_id = ?2 WHERE entity_id = ?1",
        ] {
            tx.execute(sql, params![src, dst]).ctx(OP, &path)?;
        }
        tx.execute(
            "UPDATE entities SET mentions = mentions + (SELECT mentions FROM entities WHERE id = ?1), \
             tokens = tokens || ' ' || (SELECT tokens FROM entities WHERE id = ?1), updated_ms = ?3 WHERE id = ?2",
            params![src, dst, now_ms()],
        )
        .ctx(OP, &path)?;
        crate::scene::move_entity_refs(&tx, &path, src, dst)?;
        tx.execute("DELETE FROM entities WHERE id = ?1", [src])
            .ctx(OP, &path)?;
        tx.execute(
            "INSERT INTO aliases (norm, alias, entity_id) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
            params![normal_form(&src_name), src_name, dst],
        )
        .ctx(OP, &path)?;
        tracing::debug!(source = %src_name, target = %dst_name, redirected, "graph: merged entities");
        tx.commit().ctx(OP, &path)?;
        Ok(redirected)
    }

    /// Up to `limit` current relations with a source sentence not reviewed before, lowest
    /// confidence first; each is marked reviewed, so the next call shows others.
    pub fn review_batch(&mut self, limit: usize) -> Result<Vec<ReviewItem>, GraphError> {
        const OP: &str = "review_batch";
        let path = self.path.clone();
        let tx = self.conn.transaction().ctx(OP, &path)?;
        let items: Vec<ReviewItem> = tx
            .prepare(
                "SELECT r.id, e1.name || ' ' || r.predicate || ' ' || e2.name, \
                 (SELECT s.text FROM provenance p JOIN sentences s ON s.id = p.sentence_id \
                  WHERE p.relation_id = r.id ORDER BY p.id LIMIT 1), r.confidence \
                 FROM relations r JOIN entities e1 ON e1.id = r.subject_id \
                 JOIN entities e2 ON e2.id = r.object_id \
                 WHERE r.superseded_ms IS NULL AND r.valid_to_ms IS NULL \
                 AND NOT EXISTS (SELECT 1 FROM reviewed v WHERE v.relation_id = r.id) \
                 ORDER BY r.confidence, r.id LIMIT +?1",
            )
            .ctx(OP, &path)?
            .query_map([i64::try_from(limit).unwrap_or(i64::MAX)], |r| {
                Ok(ReviewItem {
                    id: FactId::Relation(r.get(0)?),
                    fact: r.get(1)?,
                    sentence: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                    confidence: r.get(3)?,
                })
            })
            .ctx(OP, &path)?
            .collect::<Result<_, _>>()
            .ctx(OP, &path)?;
        let now = now_ms();
        for item in &items {
            let FactId::Relation(id) = item.id else {
                continue;
            };
            tx.execute(
                "INSERT INTO reviewed (relation_id, reviewed_ms) VALUES (?1, ?2)",
                params![id, now],
            )
            .ctx(OP, &path)?;
        }
        tx.commit().ctx(OP, &path)?;
        Ok(items)
    }
}

#[cfg(test)]
mod tests {
    use super::bigram_jaccard;

    #[test]
    fn bigram_jaccard_matches_its_definition() {
        assert_eq!(bigram_jaccard("abc", "abc"), 1.0);
        assert_eq!(bigram_jaccard("a", "b"), 0.0);
        // {ab, bc} vs {ab, bd}: 1 shared of 3.
        assert!((bigram_jaccard("abc", "abd") - 1.0 / 3.0).abs() < 1e-12);
        assert!(bigram_jaccard("北京市", "北京") > 0.4);
    }
}
