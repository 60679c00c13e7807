use hearth_memory::{
    Embedder, OnnxEmbedder, RecallConfig,
    recall_bench::{self, Measure, System},
};
use std::sync::Arc;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let passage: usize = std::env::var("PASSAGE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let spec = std::env::var("SWEEP").unwrap_or_default();
    let embedder: Option<Arc<dyn Embedder>> = if std::env::var("NODENSE").is_ok() {
        None
    } else {
        Some(Arc::new(OnnxEmbedder::locate_and_load(None, 1).unwrap()))
    };
    let mut configs = vec![];
    for item in spec.split(';').filter(|s| !s.is_empty()) {
        let v: Vec<f64> = item.split(',').map(|x| x.parse().unwrap()).collect();
        configs.push(RecallConfig {
            rrf_k: v[0],
            depth: v[1] as usize,
            dense_weight: v[2],
            keyword_weight: v[3],
            passage_chars: passage,
            ..RecallConfig::default()
        });
    }
    let reports = recall_bench::run_configs(
        std::path::Path::new(&path),
        &[1, 5, 10],
        embedder,
        &configs,
        |l| eprintln!("{l}"),
    )
    .unwrap();
    for r in &reports {
        let c = &r.config;
        let f = |m, k, keep: &dyn Fn(usize) -> bool| r.recall_over(System::Hearth, m, k, keep);
        println!(
            "k{:>4} d{:>3} wd{:.2} wk{:.2} p{} | any@1 {:.3} any@5 {:.3} (even {:.3} odd {:.3}) any@10 {:.3} all@5 {:.3} s_any@5 {:.3} s_all@5 {:.3} | p50 {:.1}ms p99 {:.1}ms",
            c.rrf_k,
            c.depth,
            c.dense_weight,
            c.keyword_weight,
            c.passage_chars,
            f(Measure::TurnAny, 1, &|_| true),
            f(Measure::TurnAny, 5, &|_| true),
            f(Measure::TurnAny, 5, &|i| i % 2 == 0),
            f(Measure::TurnAny, 5, &|i| i % 2 == 1),
            f(Measure::TurnAny, 10, &|_| true),
            f(Measure::TurnAll, 5, &|_| true),
            f(Measure::SessionAny, 5, &|_| true),
            f(Measure::SessionAll, 5, &|_| true),
            r.hearth_latency.p50.as_secs_f64() * 1e3,
            r.hearth_latency.p99.as_secs_f64() * 1e3
        );
    }
    println!("ingest {:.1}s", reports[0].ingest.as_secs_f64());
}
