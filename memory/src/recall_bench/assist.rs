//! A second recall source fused with cold recall in the benchmark: the L3 graph, which lives
//! in a crate above this one, plugs in through [`RecallAssist`] so the graph-assisted ranking is
//! measured in the same run, on the same ingest, beside cold recall alone.

use std::time::Duration;

use crate::Store;
use crate::recall::{DEFAULT_RRF_K, Ranked, reciprocal_rank_fusion};

/// What an assist did with one corpus.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AssistIngest {
    /// Items it read.
    pub items: usize,
    /// Time it took (distillation, for the graph).
    pub took: Duration,
}

/// Why an assisting source failed: its own error, kept whole (the graph's lives in a crate
/// above this one).
pub type AssistError = Box<dyn std::error::Error + Send + Sync>;

/// A recall source over a corpus already archived in cold context.
pub trait RecallAssist {
    /// A short name for the report label (`graph`).
    fn name(&self) -> &str;

    /// The weight of its list in the fusion with cold recall (cold recall's is 1).
    fn weight(&self) -> f64 {
        1.0
    }

    /// Builds the source from the corpus's cold entries in `store` (each entry's event id is
    /// the item's id).
    fn ingest(&mut self, corpus_id: &str, store: &Store) -> Result<AssistIngest, AssistError>;

    /// The item ids it finds for `query` asked at `asked_ms`, best first, at most `depth`.
    fn recall(
        &mut self,
        query: &str,
        asked_ms: i64,
        depth: usize,
    ) -> Result<Vec<String>, AssistError>;

    /// What else it measured over the run, for the report (the graph: tokens its prompt block
    /// would add per query).
    fn summary(&self) -> Option<String> {
        None
    }
}

/// Cold recall's ranked item numbers fused with the assist's by reciprocal rank, the assist's
/// list weighted `weight` (cold recall 1): the fused order of both, cut at `depth`.
pub fn fuse_assisted(cold: &[usize], assisted: &[usize], weight: f64, depth: usize) -> Vec<usize> {
    let cold: Vec<i64> = cold.iter().map(|&n| n as i64).collect();
    let assisted: Vec<i64> = assisted.iter().map(|&n| n as i64).collect();
    let lists = [
        Ranked {
            ids: &cold,
            weight: 1.0,
        },
        Ranked {
            ids: &assisted,
            weight,
        },
    ];
    reciprocal_rank_fusion(&lists, DEFAULT_RRF_K)
        .into_iter()
        .take(depth)
        .map(|f| f.id as usize)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_both_lists_hold_rises_and_the_assist_alone_adds_below() {
        let fused = fuse_assisted(&[1, 2, 3], &[3, 9], 1.0, 4);
        assert_eq!(fused[0], 3, "in both lists");
        assert!(fused.contains(&9), "the assist's own find is kept");
        assert_eq!(fuse_assisted(&[1, 2], &[], 1.0, 5), [1, 2]);
        assert_eq!(fuse_assisted(&[1, 2, 3], &[5], 1.0, 2).len(), 2);
    }
}
