use hearth_memory::{
    ColdContext, ContextEvent, Embedder, OnnxEmbedder, Store, query_tokens, recall_bench::RecallSet,
};
use std::sync::Arc;
fn main() {
    let set = RecallSet::load(std::path::Path::new(&std::env::args().nth(1).unwrap())).unwrap();
    let emb: Option<Arc<dyn Embedder>> = if std::env::var("NODENSE").is_ok() {
        None
    } else {
        Some(Arc::new(OnnxEmbedder::locate_and_load(None, 1).unwrap()))
    };
    let dir = std::env::temp_dir().join(format!("rx-peek-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cold = ColdContext::new(Store::open(dir.join("m.db")).unwrap(), emb);
    let ev: Vec<ContextEvent> = set.corpora["home"]
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let mut e = ContextEvent::new(i as i64, &it.speaker, &it.text);
            e.id = it.id.clone();
            e
        })
        .collect();
    cold.archive_events(ev, "x", 0).unwrap();
    for q in set.questions.iter().filter(|q| q.corpus == "home") {
        println!("Q {} [{}]", q.text, query_tokens(&q.text));
        for h in cold.peek(&q.text, 3).unwrap() {
            println!(
                "   {} {:.4} d={:?} k={:?} {}",
                h.event.id, h.score, h.dense_cosine, h.keyword_score, h.text
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
