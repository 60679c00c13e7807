//! The dense list finds a fact by the words around it, and only a fact close enough to the
//! query: without a floor the nearest facts would join every recall, whatever was asked.

use std::sync::Arc;

use hearth_graph::{RecallLimits, Statement};
use hearth_memory::{EmbedError, Embedder, Fingerprint, Pooling};

use crate::support::{T0, fact, graph, source};

/// Bag of words hashed into 64 dimensions: texts sharing words are close, others orthogonal
/// or nearly.
struct Words(Fingerprint);

impl Words {
    fn new() -> Self {
        Self(Fingerprint::new("words", "0123456789ab", 64, Pooling::Mean).expect("fingerprint"))
    }
}

impl Embedder for Words {
    fn fingerprint(&self) -> &Fingerprint {
        &self.0
    }

    fn dim(&self) -> usize {
        64
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 64];
                for w in t.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
                    if w.len() > 2 {
                        let h = w.bytes().fold(7usize, |h, b| h * 31 + usize::from(b));
                        v[h % 64] += 1.0;
                    }
                }
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                if n > 0.0 {
                    v.iter_mut().for_each(|x| *x /= n);
                }
                v
            })
            .collect())
    }
}

#[test]
fn the_dense_list_keeps_only_facts_near_enough_to_the_query() {
    let mut g = graph();
    g.graph.set_embedder(Some(Arc::new(Words::new())));
    g.graph
        .tell(
            &[Statement {
                sentence: "Ana works at the harbour office every weekday".into(),
                facts: vec![fact("Ana", "works_at", "harbour office")],
                events: vec![],
            }],
            &source(None),
        )
        .unwrap();
    // The far query shares no word with the fact and names no entity: only the dense list
    // could bring it.
    let near = "weekday harbour";
    let far = "rain tomorrow afternoon";
    let floored = RecallLimits::DEFAULT;
    assert!(floored.dense_floor > 0.0);
    assert!(g.graph.recall_with(far, T0, 8, floored).unwrap().is_empty());
    let unfloored = RecallLimits {
        dense_floor: 0.0,
        ..floored
    };
    assert_eq!(
        g.graph.recall_with(far, T0, 8, unfloored).unwrap().len(),
        1,
        "without the floor the one fact joins any recall"
    );
    let hits = g.graph.recall_with(near, T0, 8, floored).unwrap();
    assert!(
        hits.iter().any(|h| h.object == "harbour office"),
        "{hits:?}"
    );
}
