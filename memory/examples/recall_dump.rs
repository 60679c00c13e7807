use hearth_memory::{
    ColdContext, ContextEvent, Embedder, OnnxEmbedder, RecallConfig, Store, query_tokens,
    recall_bench::RecallSet, split_passages,
};
use std::io::Write;
use std::sync::Arc;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let out = std::env::args().nth(2).unwrap();
    let passage: usize = std::env::var("PASSAGE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let maxsim: usize = std::env::var("MAXSIM")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let set = RecallSet::load(std::path::Path::new(&path)).unwrap();
    let emb: Arc<dyn Embedder> = Arc::new(OnnxEmbedder::locate_and_load(None, 1).unwrap());
    let dir = std::env::temp_dir().join(format!("rx-dump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = Store::open(dir.join("m.db")).unwrap();
    let mut cold = ColdContext::new(store, Some(emb.clone())).with_config(RecallConfig {
        passage_chars: passage,
        ..Default::default()
    });
    let corpus = &set.corpora["pool"];
    let events: Vec<ContextEvent> = corpus
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let mut e = if it.speaker == "assistant" {
                ContextEvent::new(i as i64, "agent", "").with_response(it.text.clone())
            } else {
                ContextEvent::new(i as i64, "user", it.text.clone())
            };
            e.id = it.id.clone();
            e
        })
        .collect();
    let mut ids = vec![];
    for b in events.chunks(64) {
        ids.extend(cold.archive_events(b.to_vec(), "import", 0).unwrap());
    }
    eprintln!("ingested");
    let vecs: Vec<Vec<f32>> = ids
        .iter()
        .map(|&id| {
            cold.store()
                .cold_get(id)
                .unwrap()
                .unwrap()
                .dense
                .unwrap()
                .values
        })
        .collect();
    // optional passage vectors for max-sim
    let mut pv: Vec<(usize, Vec<f32>)> = vec![];
    if maxsim > 0 {
        let mut pieces: Vec<(usize, &str)> = vec![];
        for (i, it) in corpus.iter().enumerate() {
            for p in split_passages(&it.text, maxsim) {
                pieces.push((i, p));
            }
        }
        eprintln!("{} passages", pieces.len());
        for c in pieces.chunks(64) {
            let t: Vec<&str> = c.iter().map(|p| p.1).collect();
            for (p, v) in c.iter().zip(emb.embed_batch(&t).unwrap()) {
                pv.push((p.0, v));
            }
        }
        eprintln!("passages embedded");
    }
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let mut f = std::io::BufWriter::new(std::fs::File::create(&out).unwrap());
    for q in &set.questions {
        let qv = emb.embed(&q.text).unwrap();
        let mut d: Vec<(usize, f32)> = vecs
            .iter()
            .enumerate()
            .map(|(i, v)| (i, dot(&qv, v)))
            .collect();
        d.sort_by(|a, b| b.1.total_cmp(&a.1));
        d.truncate(300);
        let kw = cold.store().cold_fts(&query_tokens(&q.text), 300).unwrap();
        let kw: Vec<(usize, f64)> = kw
            .iter()
            .map(|(id, s)| ((id - ids[0]) as usize, *s))
            .collect();
        let mut m: Vec<(usize, f32)> = vec![];
        if maxsim > 0 {
            let mut best = vec![f32::MIN; corpus.len()];
            for (i, v) in &pv {
                let s = dot(&qv, v);
                if s > best[*i] {
                    best[*i] = s;
                }
            }
            m = best.into_iter().enumerate().collect();
            m.sort_by(|a, b| b.1.total_cmp(&a.1));
            m.truncate(300);
        }
        let mut q2 = qv.clone();
        for &(i, _) in d.iter().take(3) {
            for (a, b) in q2.iter_mut().zip(&vecs[i]) {
                *a += 0.5 / 3.0 * b;
            }
        }
        let mut p: Vec<(usize, f32)> = vecs
            .iter()
            .enumerate()
            .map(|(i, v)| (i, dot(&q2, v)))
            .collect();
        p.sort_by(|a, b| b.1.total_cmp(&a.1));
        p.truncate(300);
        writeln!(
            f,
            "{}",
            serde_json::json!({"q": q.id, "dense": d, "kw": kw, "max": m, "prf": p})
        )
        .unwrap();
    }
    std::fs::remove_dir_all(&dir).ok();
}
