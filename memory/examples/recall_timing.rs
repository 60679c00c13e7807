use hearth_memory::{
    ColdContext, ContextEvent, Embedder, OnnxEmbedder, Store, query_tokens, recall_bench::RecallSet,
};
use std::sync::Arc;
use std::time::Instant;
fn pct(mut v: Vec<f64>) -> String {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    format!(
        "p50 {:.2} p90 {:.2} p99 {:.2} max {:.2}",
        v[v.len() / 2],
        v[v.len() * 9 / 10],
        v[v.len() * 99 / 100],
        v[v.len() - 1]
    )
}
fn main() {
    let set = RecallSet::load(std::path::Path::new(&std::env::args().nth(1).unwrap())).unwrap();
    let emb: Arc<dyn Embedder> = Arc::new(OnnxEmbedder::locate_and_load(None, 1).unwrap());
    let dir = std::env::temp_dir().join(format!("rx-timing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cold = ColdContext::new(Store::open(dir.join("m.db")).unwrap(), Some(emb.clone()));
    let ev: Vec<ContextEvent> = set.corpora["pool"]
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let mut e = if it.speaker == "assistant" {
                ContextEvent::new(i as i64, "agent", "").with_response(it.text.clone())
            } else {
                ContextEvent::new(i as i64, &it.speaker, &it.text)
            };
            e.id = it.id.clone();
            e
        })
        .collect();
    for b in ev.chunks(64) {
        cold.archive_events(b.to_vec(), "x", 0).unwrap();
    }
    let (mut te, mut tf, mut tp, mut tr) = (vec![], vec![], vec![], vec![]);
    for q in &set.questions {
        let t = Instant::now();
        emb.embed(&q.text).unwrap();
        te.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        cold.store().cold_fts(&query_tokens(&q.text), 50).unwrap();
        tf.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        cold.peek(&q.text, 10).unwrap();
        tp.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        cold.recall(&q.text, 10, 1).unwrap();
        tr.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "embed  {}\nfts    {}\npeek   {}\nrecall {}",
        pct(te),
        pct(tf),
        pct(tp),
        pct(tr)
    );
    std::fs::remove_dir_all(&dir).ok();
}
