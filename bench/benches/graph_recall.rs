//! Graph recall latency at 10k, 100k and 1M relations, against a plain FTS5 bm25 query on the
//! same file in the same run; and distillation throughput (cold items per second) with the
//! model-free distiller, against the extraction alone.
//!
//! The synthetic graphs are built once and kept under `target/graph-bench/` (1M relations take
//! a few minutes to build); `GRAPH_BENCH_SIZES=10000,100000` picks the sizes. Queries rotate
//! over people, things and the speaker; recall and baseline alternate query by query so drift
//! on a shared machine hits both alike.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::Criterion;
use hearth_bench::{Samples, pin_to_core, report};
use hearth_graph::{
    ColdItem, Distiller, Fact, FactMode, FactSource, GraphStore, ResolvedDate, RuleDistiller,
    Statement, USER,
};

const CORE: usize = 1;
const T0: i64 = 1_704_186_000_000;
const DAY: i64 = 86_400_000;
const ROUNDS: usize = 400;

/// Relations per synthetic person: home (a quarter moved once: one past, one current), work,
/// two likes, two acquaintances, one language.
const PER_PERSON: usize = 8;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn fact(
    subject: String,
    predicate: &str,
    object: String,
    mode: FactMode,
    from: Option<i64>,
) -> Fact {
    Fact {
        subject,
        subject_kind: "person",
        predicate: predicate.to_owned(),
        object,
        object_kind: "concept",
        mode,
        confidence: 0.8,
        valid_from: from.map(|ms| ResolvedDate {
            start_ms: ms,
            end_ms: ms + DAY,
            phrase: String::new(),
        }),
    }
}

fn said(sentence: String, f: Fact) -> Statement {
    Statement {
        sentence,
        facts: vec![f],
        events: vec![],
    }
}

/// The statements of person `p` in a graph of `people` people.
fn person(p: usize, people: usize, rng: &mut Rng) -> Vec<(Statement, i64)> {
    let me = format!("Person{p}");
    let city = |c: usize| format!("City{}", c % 2_000);
    let mut out = Vec::with_capacity(PER_PERSON);
    let t = T0 + (p as i64 % 300) * DAY;
    let home = p * 7;
    out.push((
        said(
            format!("{me} lives in {}", city(home)),
            fact(me.clone(), "lives_in", city(home), FactMode::Holds, None),
        ),
        t,
    ));
    if p.is_multiple_of(4) {
        let to = city(home + 1);
        out.push((
            said(
                format!("{me} moved to {to}"),
                fact(
                    me.clone(),
                    "lives_in",
                    to,
                    FactMode::Began,
                    Some(t + 30 * DAY),
                ),
            ),
            t + 30 * DAY,
        ));
    } else {
        out.push((
            said(
                format!("{me} speaks Lang{}", p % 40),
                fact(
                    me.clone(),
                    "speaks",
                    format!("Lang{}", p % 40),
                    FactMode::Holds,
                    None,
                ),
            ),
            t,
        ));
    }
    let org = format!("Org{}", rng.below(5_000));
    out.push((
        said(
            format!("{me} works at {org}"),
            fact(me.clone(), "works_at", org, FactMode::Holds, None),
        ),
        t,
    ));
    for _ in 0..2 {
        let thing = format!("Thing{}", rng.below(20_000));
        out.push((
            said(
                format!("{me} likes {thing}"),
                fact(me.clone(), "likes", thing, FactMode::Holds, None),
            ),
            t,
        ));
    }
    for _ in 0..2 {
        let other = format!("Person{}", rng.below(people));
        out.push((
            said(
                format!("{me} knows {other}"),
                fact(me.clone(), "knows", other, FactMode::Holds, None),
            ),
            t,
        ));
    }
    out.push((
        said(
            format!("{me} visited {}", city(home + 3)),
            fact(me.clone(), "visited", city(home + 3), FactMode::Holds, None),
        ),
        t,
    ));
    out
}

fn bench_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/graph-bench");
    std::fs::create_dir_all(&dir).expect("bench directory");
    dir
}

/// The graph of about `relations` relations, built once and kept.
fn graph(relations: usize) -> GraphStore {
    let path = bench_dir().join(format!("relations-{relations}.db"));
    let done = path.with_extension("done");
    if path.exists() && done.exists() {
        return GraphStore::open(&path).expect("open kept graph");
    }
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(path.with_extension("db-wal"));
    let started = Instant::now();
    let mut g = GraphStore::open(&path).expect("create graph");
    let people = relations / PER_PERSON;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut batch: Vec<Statement> = Vec::new();
    let mut at = T0;
    let flush = |g: &mut GraphStore, batch: &mut Vec<Statement>, at: i64| {
        let source = FactSource {
            cold_item: None,
            turn_id: "bench".into(),
            said_ms: at,
        };
        g.tell(batch, &source).expect("tell batch");
        batch.clear();
    };
    // The speaker, with a history of homes and many likes: the hub every "I" query starts at.
    for i in 0..200 {
        batch.push(said(
            format!("I like Thing{i}"),
            fact(
                USER.into(),
                "likes",
                format!("Thing{i}"),
                FactMode::Holds,
                None,
            ),
        ));
    }
    batch.push(said(
        "I live in City1".into(),
        fact(
            USER.into(),
            "lives_in",
            "City1".into(),
            FactMode::Holds,
            None,
        ),
    ));
    flush(&mut g, &mut batch, T0);
    batch.push(said(
        "I moved to City2".into(),
        fact(
            USER.into(),
            "lives_in",
            "City2".into(),
            FactMode::Began,
            Some(T0 + 400 * DAY),
        ),
    ));
    flush(&mut g, &mut batch, T0 + 400 * DAY);
    for p in 0..people {
        // Statements of one source share a said time; the moves are dated explicitly.
        for (st, t) in person(p, people, &mut rng) {
            at = at.max(t);
            batch.push(st);
        }
        if batch.len() >= 20_000 {
            flush(&mut g, &mut batch, at);
        }
    }
    flush(&mut g, &mut batch, at);
    g.checkpoint().expect("checkpoint");
    std::fs::write(&done, b"").expect("mark built");
    let stats = g.stats().expect("stats");
    println!(
        "built {relations}-relation graph in {:.1} s: {} current, {} past, {} entities",
        started.elapsed().as_secs_f64(),
        stats.current,
        stats.past,
        stats.entities
    );
    g
}

fn query(i: usize, people: usize, rng: &mut Rng) -> String {
    match i % 4 {
        0 => format!("where does Person{} live", rng.below(people)),
        1 => format!("who likes Thing{}", rng.below(20_000)),
        2 => ["where do I live", "what do I like", "我住在哪里"][rng.below(3)].to_owned(),
        _ => format!(
            "Person{} and Person{}",
            rng.below(people),
            rng.below(people)
        ),
    }
}

fn recall_case(relations: usize) {
    let g = graph(relations);
    let stats = g.stats().expect("stats");
    let people = relations / PER_PERSON;
    let mut rng = Rng(7);
    let now = T0 + 800 * DAY;
    // Warm the page cache and the statement cache.
    for i in 0..40 {
        let q = query(i, people, &mut rng);
        black_box(g.recall(&q, now, 10).expect("recall"));
        black_box(g.keyword_baseline(&q, 10).expect("baseline"));
    }
    let (mut hearth, mut base) = (Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS));
    let mut returned = 0usize;
    for i in 0..ROUNDS {
        let q = query(i, people, &mut rng);
        let t = Instant::now();
        let hits = g.recall(black_box(&q), now, 10).expect("recall");
        hearth.push(t.elapsed());
        returned += hits.len();
        let t = Instant::now();
        black_box(g.keyword_baseline(black_box(&q), 10).expect("baseline"));
        base.push(t.elapsed());
    }
    report(
        &format!(
            "graph recall k=10 at {relations} relations ({} current, {} past; {:.1} hits/query), vs plain FTS5 bm25",
            stats.current,
            stats.past,
            returned as f64 / ROUNDS as f64
        ),
        &Samples::new(hearth),
        "SELECT rowid FROM relation_fts MATCH any-term ORDER BY rank LIMIT 10",
        &Samples::new(base),
        None,
    );
    forget_cost(g, relations, people, now);
}

/// What a user's "forget this" costs at this size: the delete, its tombstones and the scrub
/// that makes the fact unreadable from the file (the FTS5 indexes merged, the WAL truncated).
/// It removes a few facts from the kept graph, a negligible share of it.
fn forget_cost(mut g: GraphStore, relations: usize, people: usize, now: i64) {
    const FORGETS: usize = 5;
    let mut rng = Rng(11);
    let mut took = Vec::with_capacity(FORGETS);
    for i in 0..FORGETS * 4 {
        if took.len() == FORGETS {
            break;
        }
        let q = query(i, people, &mut rng);
        let Some(hit) = g.recall(&q, now, 1).expect("recall").into_iter().next() else {
            continue;
        };
        let t = Instant::now();
        g.forget(hit.id).expect("forget");
        took.push(t.elapsed());
    }
    took.sort_unstable();
    if let (Some(first), Some(last)) = (took.first(), took.last()) {
        println!(
            "   forget (delete, tombstones, FTS5 optimize, WAL truncate) at {relations} relations: \
             p50 {:.1} ms, min {:.1} ms, max {:.1} ms over {}",
            took[took.len() / 2].as_secs_f64() * 1e3,
            first.as_secs_f64() * 1e3,
            last.as_secs_f64() * 1e3,
            took.len()
        );
    }
    // A remembered turn's forget also asks the graph for what the turn told, by the
    // provenance's turn, which no index holds: every provenance row is read. A turn that told
    // nothing is that cost alone.
    let mut scans = Vec::with_capacity(FORGETS);
    for i in 0..FORGETS {
        let t = Instant::now();
        let gone = g.forget_turn(&format!("a-turn-that-told-nothing-{i}"));
        scans.push(t.elapsed());
        assert!(gone.expect("forget_turn").is_empty());
    }
    scans.sort_unstable();
    println!(
        "   forget_turn of a turn that told nothing (every provenance row read) at {relations} \
         relations: p50 {:.1} ms, min {:.1} ms, max {:.1} ms over {FORGETS}",
        scans[FORGETS / 2].as_secs_f64() * 1e3,
        scans[0].as_secs_f64() * 1e3,
        scans[FORGETS - 1].as_secs_f64() * 1e3,
    );
}

fn cold_items(first: i64, n: usize) -> Vec<ColdItem> {
    (0..n)
        .map(|k| {
            let i = first + k as i64;
            let text = match i % 4 {
                0 => format!("I live in City{i}. I like Thing{}.", i % 97),
                1 => format!("My sister Ana{i} lives in Town{i}, and I went to Kyoto yesterday."),
                2 => format!("我住在城市{}。我喜欢爬山。", i % 50),
                _ => "Thanks, that sounds good to me, let's talk tomorrow.".to_owned(),
            };
            ColdItem {
                id: i,
                turn_id: format!("turn-{i}"),
                said_ms: T0 + i * 60_000,
                text,
                utc_offset_secs: 0,
            }
        })
        .collect()
}

fn distill_case() {
    const BATCH: usize = 200;
    let dir = tempfile_dir();
    let mut g = GraphStore::open(dir.join("distill.db")).expect("open");
    let distiller = RuleDistiller::default();
    let (mut full, mut extract) = (Vec::new(), Vec::new());
    let mut next = 1i64;
    for _ in 0..15 {
        let items = cold_items(next, BATCH);
        next += BATCH as i64;
        let t = Instant::now();
        for item in &items {
            black_box(distiller.statements(item));
        }
        extract.push(t.elapsed() / BATCH as u32);
        let t = Instant::now();
        let report = g.distill_with(&distiller, &items, T0).expect("distill");
        full.push(t.elapsed() / BATCH as u32);
        assert_eq!(report.distilled + report.kept_for_retry, BATCH);
    }
    let (full, extract) = (Samples::new(full), Samples::new(extract));
    report(
        "distill one cold item (rules + extractor, one durable transaction each), per item",
        &full,
        "extraction alone (RuleDistiller::statements), per item",
        &extract,
        None,
    );
    println!(
        "   throughput p50: {:.0} items/s stored, {:.0} items/s extracted",
        1.0 / full.p50().as_secs_f64(),
        1.0 / extract.p50().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(dir);
}

fn tempfile_dir() -> PathBuf {
    let dir = bench_dir().join(format!("distill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("distill dir");
    dir
}

fn main() {
    pin_to_core(CORE);
    let sizes: Vec<usize> = std::env::var("GRAPH_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000, 1_000_000]);
    for &n in &sizes {
        recall_case(n);
    }
    distill_case();

    let smallest = sizes.first().copied().unwrap_or(10_000);
    let g = graph(smallest);
    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    criterion.bench_function(
        &format!("graph_recall/{smallest}/where_does_person_live"),
        |b| b.iter(|| g.recall(black_box("where does Person42 live"), T0 + 800 * DAY, 10)),
    );
    criterion.bench_function(&format!("graph_recall/{smallest}/baseline_fts5"), |b| {
        b.iter(|| g.keyword_baseline(black_box("where does Person42 live"), 10))
    });
    criterion.final_summary();
}
