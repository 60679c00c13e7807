#![allow(clippy::all, missing_docs)]
use hearth_memory::*;
use std::collections::HashMap;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&args[1]).unwrap()).unwrap();
    let store = Store::open(std::path::Path::new(&args[2])).unwrap();
    let models = MemoryModels::load(None, 1);
    let mut cold = ColdContext::new(store, models.dense.clone())
        .with_companion(models.companion.clone().unwrap());
    let items = data["corpora"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .as_array()
        .unwrap();
    let by_id: HashMap<&str, &serde_json::Value> = items
        .iter()
        .map(|i| (i["id"].as_str().unwrap(), i))
        .collect();
    let wanted: Vec<&str> = args[3..].iter().map(|s| s.as_str()).collect();
    for q in data["questions"].as_array().unwrap() {
        let text = q["text"].as_str().unwrap();
        if !wanted
            .iter()
            .any(|w| text.contains(w) || q["id"].as_str() == Some(w))
        {
            continue;
        }
        let asked = parse_iso8601(q["time"].as_str().unwrap()).unwrap();
        let ev: Vec<&str> = q["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap())
            .collect();
        let evsess: Vec<&str> = ev
            .iter()
            .map(|e| by_id[e]["session"].as_str().unwrap())
            .collect();
        println!(
            "\n=== {} [{}] windows={:?}",
            text,
            q["category"],
            question_windows(text, asked, 0)
        );
        for e in &ev {
            let it = by_id[e];
            println!(
                "  EVIDENCE {} {} {}",
                e,
                &it["time"].as_str().unwrap()[..10],
                &it["text"]
                    .as_str()
                    .unwrap()
                    .chars()
                    .take(160)
                    .collect::<String>()
            );
        }
        let hits = cold.peek(text, 200, asked).unwrap();
        for (r, h) in hits.iter().enumerate() {
            let id = h.event.id.as_str();
            let it = by_id.get(id);
            let sess = it.map(|i| i["session"].as_str().unwrap()).unwrap_or("?");
            let mark = if ev.contains(&id) {
                "**EV"
            } else if evsess.contains(&sess) {
                "*ses"
            } else {
                "    "
            };
            if r < 8 || mark != "    " {
                let days = (asked - h.event.timestamp_ms) / 86_400_000;
                println!(
                    "  {r:3} {mark} {:.3} cos={:?} kw={:?} d={} {} {}: {}",
                    h.score,
                    h.dense_cosine,
                    h.keyword_score.map(|k| (k * 100.0).round() / 100.0),
                    days,
                    sess,
                    h.event.source,
                    h.text
                        .chars()
                        .take(110)
                        .collect::<String>()
                        .replace('\n', " ")
                );
            }
            if r > 60 && mark == "    " && r > 8 {}
        }
    }
}
