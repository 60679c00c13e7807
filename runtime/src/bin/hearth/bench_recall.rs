//! `hearth bench recall FILE`: cold context's recall on a `hearth-recall/1` set (see
//! `hearth_memory::recall_bench`), beside a plain BM25 in the same run; its ablations, weight
//! arms, derived sets, graph-assisted arm and the prune replay.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// Arguments of `hearth bench recall`.
#[derive(Args, Debug)]
pub struct RecallArgs {
    /// The data set (format `hearth-recall/1`).
    file: PathBuf,
    /// The k values to report.
    #[arg(long, value_delimiter = ',', default_value = "1,5,10")]
    k: Vec<usize>,
    /// Keyword recall only (no embedding model loaded).
    #[arg(long)]
    no_model: bool,
    /// Where `make setup` put the embedding model (default: the user cache dir).
    #[arg(long)]
    model_dir: Option<PathBuf>,
    /// Keep each corpus's store in this directory (created when missing) and reuse it when it
    /// already holds every item (re-measures ranking without re-embedding; ingest is then not
    /// measured); a store a stopped run left with the corpus's first items is resumed.
    #[arg(long)]
    store_dir: Option<PathBuf>,
    /// Dense rankings fused with the keywords: none, use (the default model), e5 (the
    /// companion), both.
    #[arg(long, default_value = "both")]
    dense: hearth_memory::recall_bench::DenseLists,
    /// Query priors (recency, named time spans, whose words): on or off.
    #[arg(long, default_value = "on")]
    priors: hearth_memory::recall_bench::PriorsSwitch,
    /// How the lists are fused: above-chance (the default), standard (standard scores over each
    /// list's own candidates), rank (reciprocal rank fusion).
    #[arg(long, default_value = "above-chance")]
    fusion: hearth_memory::FusionMethod,
    /// Also measure every combination of --dense and --priors on the same ingest, and the other
    /// fusion methods.
    #[arg(long)]
    ablate: bool,
    /// Also measure these weights of the fused lists, each as an arm on the same ingest:
    /// `dense:keywords:companion`, comma-separated (`1:1.5:1,1:2:1`).
    #[arg(long, value_delimiter = ',')]
    weights: Vec<hearth_memory::recall_bench::FusionWeights>,
    /// Also measure an arm with the passage list fused as a fourth list at weight 1: each of
    /// the person's long entries cut into passages of about this many characters, scored by
    /// its best (built in memory after the ingest).
    #[arg(long)]
    passage_list: Option<usize>,
    /// Also measure graph-assisted recall: each corpus distilled into an L3 graph with the
    /// model-free distiller, its facts' turns fused with cold recall (label `+graph`).
    #[arg(long)]
    graph: bool,
    /// The weight of the graph's list against cold recall's 1 in that fusion.
    #[arg(long, default_value_t = 1.0)]
    graph_weight: f64,
    /// The graph's facts embedded by the main model and searched by it too, keeping facts at
    /// this cosine to the question or above (unset: the graph's keyword and entity lists only).
    #[arg(long)]
    graph_vectors: Option<f32>,
    /// Derived sets to run (as-is; undated: every question asked now; named: speakers under
    /// people's names; third-person: named, and the questions name them; short-turns:
    /// third-person, each turn cut into its sentences).
    #[arg(long, value_delimiter = ',', default_value = "as-is")]
    variant: Vec<hearth_memory::recall_bench::SetVariant>,
    /// Measure a fixed sample of about this many questions (with their evidence sessions and
    /// the same share of the other sessions) instead of the whole set.
    #[arg(long)]
    sample: Option<usize>,
    /// Instead of measuring, show how these questions (ids, comma-separated) rank: the fused
    /// top ten and the evidence, each with its place and score in every list and the priors'
    /// factor. Reads the stores an earlier run of the set as it is (no --variant, no
    /// --sample) kept in --store-dir.
    #[arg(long, value_delimiter = ',')]
    explain: Vec<String>,
    /// Also write every report as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Instead of ranking, replay each set through the working window at the production limits
    /// and report whether each question's evidence is still seen at the end (the prune
    /// benchmark), beside keeping the newest turns.
    #[arg(long)]
    prune: bool,
    /// With --prune: replay once per value, each prune freeing this share of the window's
    /// limit beyond it (comma-separated, 0 to 1; 0 prunes one event per turn past the limit;
    /// default: the daemon's).
    #[arg(long, value_delimiter = ',', default_values_t = [hearth_memory::DEFAULT_PRUNE_SLACK])]
    prune_slack: Vec<f64>,
    /// With --prune: replay once per value, the budget that of a model whose window is this
    /// many tokens (comma-separated; 4096 is the embedded model's; default: 32768, what the
    /// budget assumes when a source declares none).
    #[arg(long, value_delimiter = ',', default_values_t = [hearth_memory::DEFAULT_MAX_CONTEXT_TOKENS])]
    prune_window: Vec<usize>,
}

/// Runs the benchmark (or the prune replay) and prints its tables.
pub fn run(args: &RecallArgs) -> ExitCode {
    use hearth_memory::recall_bench::{Measure, System, ablation_grid, arm_label, run_variant};
    use hearth_memory::{MemoryModels, RecallConfig};
    let mut models = if args.no_model {
        MemoryModels::default()
    } else {
        MemoryModels::load(args.model_dir.clone(), 1)
    };
    // A model whose list is not fused would only be embedded for nothing: without the
    // ablation grid, which ranks every list on one ingest, it is not used at all.
    if !args.ablate {
        let ranked = args.dense.apply(RecallConfig::default());
        if ranked.dense_weight == 0.0 && ranked.companion_weight == 0.0 {
            models = MemoryModels::default();
        } else if ranked.companion_weight == 0.0 {
            models.companion = None;
        }
    }
    let base = RecallConfig {
        fusion: args.fusion,
        ..RecallConfig::default()
    };
    let chosen = args.priors.apply(args.dense.apply(base.clone()));
    let mut arms = vec![(
        arm_label(args.dense, args.priors, args.fusion),
        chosen.clone(),
    )];
    if args.ablate {
        arms.extend(
            ablation_grid(&RecallConfig::default())
                .into_iter()
                .filter(|a| a.1 != chosen),
        );
    }
    arms.extend(
        args.weights
            .iter()
            .map(|w| (w.label(), w.apply(chosen.clone()))),
    );
    if let Some(chars) = args.passage_list {
        arms.push((
            format!("{}+passages {chars}", arms[0].0),
            RecallConfig {
                passage_list_weight: 1.0,
                passage_list_chars: chars,
                ..chosen.clone()
            },
        ));
    }
    let configs: Vec<RecallConfig> = arms.iter().map(|a| a.1.clone()).collect();
    if args.prune {
        return bench_prune(args, &models, &chosen);
    }
    if !args.explain.is_empty() {
        return explain(args, &models, &chosen);
    }
    let mut all = Vec::new();
    let weight = args.graph_weight;
    let mut graph = match args
        .graph
        .then(|| hearth_runtime::recall_graph::GraphAssist::new(weight))
    {
        Some(Err(e)) => {
            eprintln!("hearth: graph-assisted recall: {e}");
            return ExitCode::from(1);
        }
        Some(Ok(g)) => match (args.graph_vectors, &models.dense) {
            (Some(floor), Some(model)) => Some(g.with_vectors(model.clone(), floor)),
            (Some(_), None) => {
                eprintln!("hearth: --graph-vectors needs the main embedding model (make setup)");
                return ExitCode::from(1);
            }
            (None, _) => Some(g),
        },
        None => None,
    };
    for &variant in &args.variant {
        let progress = |line: &str| eprintln!("recall: {line}");
        let assist = graph
            .as_mut()
            .map(|g| g as &mut dyn hearth_memory::recall_bench::RecallAssist);
        let reports = match run_variant(
            &args.file,
            variant,
            args.sample,
            &args.k,
            &models,
            &configs,
            args.store_dir.as_deref(),
            assist,
            progress,
        ) {
            Ok(reports) => reports,
            Err(e) => {
                eprintln!("hearth: {e}");
                return ExitCode::from(1);
            }
        };
        let count = reports.len();
        for (i, mut report) in reports.into_iter().enumerate() {
            // The assisted report, after the arms, keeps its `+graph` label after the first
            // arm's.
            report.label = match arms.get(i) {
                Some((label, _)) => label.clone(),
                None => format!("{}{}", arms[0].0, report.label),
            };
            all.push(report);
        }
        let first = all.len() - count;
        outln!("{}", all[first].render());
        if graph.is_some() {
            // Its categories beside cold recall's, above.
            outln!("{}", all[all.len() - 1].render());
        }
        if count > 1 {
            outln!("ablations on {} (same ingest, same run):", all[first].name);
            outln!(
                "  {:<26} {}  {:>9} {:>9}",
                "lists and priors",
                args.k
                    .iter()
                    .map(|k| format!("{:>9}", format!("turn@{k}")))
                    .collect::<String>(),
                "sess@5",
                "p50 ms"
            );
            for r in &all[first..] {
                let at: String = args
                    .k
                    .iter()
                    .map(|&k| format!("{:>9.3}", r.recall_at(System::Hearth, Measure::TurnAny, k)))
                    .collect();
                outln!(
                    "  {:<26} {at}  {:>9.3} {:>9.1}",
                    r.label,
                    r.recall_at(System::Hearth, Measure::SessionAny, 5),
                    r.hearth_latency.p50.as_secs_f64() * 1e3
                );
            }
            let bm25: String = args
                .k
                .iter()
                .map(|&k| {
                    format!(
                        "{:>9.3}",
                        all[first].recall_at(System::Bm25, Measure::TurnAny, k)
                    )
                })
                .collect();
            outln!(
                "  {:<26} {bm25}  {:>9.3}",
                "plain BM25",
                all[first].recall_at(System::Bm25, Measure::SessionAny, 5)
            );
        }
    }
    if let Some(path) = &args.json {
        let doc = serde_json::Value::Array(all.iter().map(|r| r.to_json()).collect());
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("hearth: {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}

/// `hearth bench recall --prune`: the prune replay of every variant asked for.
fn bench_prune(
    args: &RecallArgs,
    models: &hearth_memory::MemoryModels,
    config: &hearth_memory::RecallConfig,
) -> ExitCode {
    use hearth_memory::recall_bench::{PruneArm, RecallSet, run_prune, sample};
    let mut progress = |line: &str| eprintln!("recall: {line}");
    let mut json = Vec::new();
    let arms = args.variant.iter().flat_map(|&v| {
        args.prune_window.iter().flat_map(move |&window| {
            args.prune_slack
                .iter()
                .map(move |&slack| (v, PruneArm { slack, window }))
        })
    });
    for (variant, arm) in arms {
        let report = RecallSet::load(&args.file).and_then(|set| {
            let set = match args.sample {
                Some(n) => sample(set, n),
                None => set,
            };
            run_prune(&variant.apply(set), models, config, arm, &mut progress)
        });
        match report {
            Ok(report) => {
                outln!("{}", report.render());
                json.push(report.to_json());
            }
            Err(e) => {
                eprintln!("hearth: {e}");
                return ExitCode::from(1);
            }
        }
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&json).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("hearth: {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}

/// `--explain`: each named question's top ten and evidence, list by list.
fn explain(
    args: &RecallArgs,
    models: &hearth_memory::MemoryModels,
    config: &hearth_memory::RecallConfig,
) -> ExitCode {
    use hearth_memory::recall_bench::{RecallSet, explain_questions};
    let Some(dir) = &args.store_dir else {
        eprintln!("hearth: --explain reads the stores a run kept: give --store-dir");
        return ExitCode::from(2);
    };
    let result = RecallSet::load(&args.file).and_then(|set| {
        explain_questions(&set, &args.explain, models, config, dir, &mut |line| {
            outln!("{line}")
        })
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hearth: {e}");
            ExitCode::from(1)
        }
    }
}
