#![allow(clippy::all, missing_docs)]
use hearth_memory::recall_bench::{RecallSet, SetVariant};
use hearth_memory::*;
use std::collections::{BTreeMap, HashMap};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let variant: SetVariant = match args[3].as_str() {
        "as-is" => SetVariant::AsIs,
        "short-turns" => SetVariant::ShortTurns,
        "third-person" => SetVariant::ThirdPerson,
        "named" => SetVariant::Named,
        v => panic!("{v}"),
    };
    let mut set = RecallSet::load(std::path::Path::new(&args[1])).unwrap();
    set = variant.apply(set);
    let dir = std::path::PathBuf::from(&args[2]);
    let models = MemoryModels::load(None, 1);
    let arms: Vec<String> = args[4..].to_vec();
    let mut res: Vec<BTreeMap<String, (usize, usize, usize)>> = vec![BTreeMap::new(); arms.len()];
    for (cid, items) in &set.corpora {
        let qs: Vec<_> = set
            .questions
            .iter()
            .filter(|q| &q.corpus == cid && !q.evidence.is_empty())
            .collect();
        if qs.is_empty() {
            continue;
        }
        let store = Store::open(&dir.join(format!("{cid}.db"))).unwrap();
        let mut cold = ColdContext::new(store, models.dense.clone())
            .with_companion(models.companion.clone().unwrap());
        let sess: HashMap<&str, &str> = items
            .iter()
            .map(|i| (i.id.as_str(), i.session.as_str()))
            .collect();
        let pos: HashMap<&str, usize> = items
            .iter()
            .enumerate()
            .map(|(n, i)| (i.id.as_str(), n))
            .collect();
        for (ai, arm) in arms.iter().enumerate() {
            let mut c = RecallConfig::default();
            let mut nb = 0.0f64;
            let mut span = 1usize;
            for kv in arm.split(',') {
                let (k, v) = kv.split_once('=').unwrap_or(("base", "0"));
                let v: f64 = v.parse().unwrap();
                match k {
                    "twb" => c.time_window_boost = v,
                    "hl" => c.recency_half_life_days = v,
                    "aw" => c.agent_words_weight = v,
                    "nb" => nb = v,
                    "span" => span = v as usize,
                    "base" => {}
                    _ => panic!("{k}"),
                }
            }
            cold.set_config(c);
            for q in &qs {
                let asked = q.time.as_deref().and_then(parse_iso8601).unwrap_or(0);
                let ev: Vec<&str> = q.evidence.iter().map(|e| e.as_str()).collect();
                let evs: Vec<&str> = ev.iter().map(|e| sess[e]).collect();
                let mut hits = cold
                    .peek(&q.text, if nb > 0.0 { 200 } else { 5 }, asked)
                    .unwrap();
                if nb > 0.0 {
                    let score: HashMap<&str, f64> = hits
                        .iter()
                        .map(|h| (h.event.id.as_str(), h.score))
                        .collect();
                    let mut re: Vec<(f64, usize)> = hits
                        .iter()
                        .enumerate()
                        .map(|(n, h)| {
                            let id = h.event.id.as_str();
                            let p = pos[id];
                            let mut best = 0.0f64;
                            for d in 1..=span {
                                for q in [p.wrapping_sub(d), p + d] {
                                    if let Some(other) = items.get(q) {
                                        if sess[other.id.as_str()] == sess[id] {
                                            best = best
                                                .max(*score.get(other.id.as_str()).unwrap_or(&0.0));
                                        }
                                    }
                                }
                            }
                            (h.score + nb * best, n)
                        })
                        .collect();
                    re.sort_by(|a, b| b.0.total_cmp(&a.0));
                    let order: Vec<usize> = re.iter().take(5).map(|r| r.1).collect();
                    let mut taken: Vec<Option<Recalled>> = hits.drain(..).map(Some).collect();
                    hits = order
                        .into_iter()
                        .map(|n| taken[n].take().unwrap())
                        .collect();
                }
                let t = hits.iter().any(|h| ev.contains(&h.event.id.as_str()));
                let s = hits.iter().any(|h| {
                    sess.get(h.event.id.as_str())
                        .is_some_and(|x| evs.contains(x))
                });
                let e = res[ai].entry(q.category.clone()).or_default();
                e.0 += 1;
                e.1 += t as usize;
                e.2 += s as usize;
            }
        }
    }
    for (ai, arm) in arms.iter().enumerate() {
        let cat = &res[ai];
        let (n, t, s) = cat
            .values()
            .fold((0, 0, 0), |a, v| (a.0 + v.0, a.1 + v.1, a.2 + v.2));
        print!(
            "{arm:24} turn@5 {:.3} sess@5 {:.3} |",
            t as f64 / n as f64,
            s as f64 / n as f64
        );
        for (k, v) in cat {
            print!(" {}:{:.3}", &k[..k.len().min(8)], v.1 as f64 / v.0 as f64);
        }
        println!();
    }
}
