//! hearth — the command line client of hearthd, over its Unix socket.

use clap::{Args, Parser, Subcommand};
use hearth_llm::provider::SourceConfig;
use hearth_runtime::config::Config;
use hearth_runtime::socket::{Answer, Client, ClientError, Request};
use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

#[path = "hearth/out.rs"]
#[macro_use]
mod out;
#[path = "hearth/attach.rs"]
mod attach;
#[path = "hearth/bench_distill.rs"]
mod bench_distill;
#[path = "hearth/bench_knowledge.rs"]
mod bench_knowledge;
#[path = "hearth/mcp.rs"]
mod mcp;
#[path = "hearth/memory.rs"]
mod memory;
#[path = "hearth/settings.rs"]
mod settings;

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Talk to the Hearth daemon",
    long_about = "Talk to the Hearth daemon (hearthd) over its Unix socket.\n\
The socket is <data dir>/hearth.sock unless --socket or HEARTH_SOCKET says otherwise; \
set HEARTH_API_KEY when the daemon requires a key."
)]
struct Cli {
    /// The daemon's socket.
    #[arg(long, global = true, env = "HEARTH_SOCKET")]
    socket: Option<PathBuf>,
    /// The daemon's data dir (to find its socket).
    #[arg(long, global = true, env = "HEARTH_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Key for daemons started with an api_key.
    #[arg(long, global = true, env = "HEARTH_API_KEY", hide_env_values = true)]
    key: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Send one message and stream the answer as it is generated.
    Send {
        /// Files sent with the message (images, audio, documents): kept in the daemon's media
        /// store and in memory; at most 16 MB each, 17 MB together.
        #[arg(long = "attach", value_name = "FILE")]
        attach: Vec<PathBuf>,
        /// The message.
        text: Vec<String>,
    },
    /// Interactive chat; Ctrl-C stops the answer being generated, Ctrl-D leaves.
    Chat,
    /// Stop the answer being generated and cancel the messages queued now.
    Stop,
    /// Send an interrupt that may preempt the running task.
    Interrupt {
        /// L1 (background) … L4 (critical).
        #[arg(long, default_value = "L3")]
        level: String,
        text: Vec<String>,
    },
    /// Scheduler state and LLM sources with their availability.
    Status,
    /// Manage LLM sources.
    #[command(subcommand)]
    Source(SourceCommand),
    /// Manage plugins (in `<data_dir>/plugins/<name>/`).
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Manage MCP servers (kept in `<data_dir>/mcp.toml`, started by hearthd).
    #[command(subcommand)]
    Mcp(mcp::McpCommand),
    /// The daemon's graph memory: search facts, show one, why it is believed, forget it.
    #[command(subcommand)]
    Memory(memory::MemoryCommand),
    /// Read and change settings (`core.*`, `plugin.<name>.*`): through the running daemon,
    /// or on `<data_dir>/settings.db` when none runs.
    Settings(settings::SettingsArgs),
    /// Benchmarks that run locally (no daemon needed).
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Check or recover the memory store of the data dir (no daemon needed).
    #[command(subcommand)]
    Store(StoreCommand),
}

#[derive(Subcommand, Debug)]
enum StoreCommand {
    /// Check `memory.db` without writing to it; exit 0 when usable, 1 when damaged.
    Check,
    /// Salvage a damaged `memory.db` into a fresh store, keeping the damaged files (stop hearthd
    /// first).
    Recover,
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// Recall quality of cold context on a `hearth-recall/1` file, beside a plain BM25 baseline
    /// measured in the same run (turn- and session-level recall_any@k / recall_all@k, query
    /// latency, tokens injected per query, ingest throughput).
    Recall(RecallArgs),
    /// Search quality of the knowledge base on a `hearth-recall/1` file's sessions as documents,
    /// beside its keywords alone and a plain BM25 measured in the same run (hit@k, latency).
    Knowledge(bench_knowledge::KnowledgeArgs),
    /// Precision and recall of the rule distiller and the model distiller on labelled
    /// sentences (the model reached through the daemon's sources).
    Distill(bench_distill::DistillArgs),
}

#[derive(Args, Debug)]
struct RecallArgs {
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
    /// measured).
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
    /// Also measure graph-assisted recall: each corpus distilled into an L3 graph with the
    /// model-free distiller, its facts' turns fused with cold recall (label `+graph`).
    #[arg(long)]
    graph: bool,
    /// The weight of the graph's list against cold recall's 1 in that fusion.
    #[arg(long, default_value_t = 1.0)]
    graph_weight: f64,
    /// Derived sets to run (as-is; undated: every question asked now; named: speakers under
    /// people's names; third-person: named, and the questions name them; short-turns:
    /// third-person, each turn cut into its sentences).
    #[arg(long, value_delimiter = ',', default_value = "as-is")]
    variant: Vec<hearth_memory::recall_bench::SetVariant>,
    /// Measure a fixed sample of about this many questions (with their evidence sessions and
    /// the same share of the other sessions) instead of the whole set.
    #[arg(long)]
    sample: Option<usize>,
    /// Also write every report as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Instead of ranking, replay each set through the working window at the production limits
    /// and report whether each question's evidence is still seen at the end (the prune
    /// benchmark), beside keeping the newest turns.
    #[arg(long)]
    prune: bool,
}

#[derive(Subcommand, Debug)]
enum PluginCommand {
    /// Installed plugins, their state, crash counts, and manifests that failed to load.
    List,
    /// One plugin's manifest and status.
    Info { name: String },
    /// Validate DIR's `plugin.json`, copy DIR into the plugins directory and start it.
    Install { dir: PathBuf },
    /// Enable and start a plugin (resets its crash count).
    Enable { name: String },
    /// Stop a plugin and keep it stopped across restarts.
    Disable { name: String },
    /// Stop, re-read the manifest, start again (resets the crash count).
    Reload { name: String },
    /// Stop a plugin and delete its directory.
    Remove { name: String },
}

impl PluginCommand {
    fn request(&self) -> Request {
        let (action, name) = match self {
            PluginCommand::List => ("list", None),
            PluginCommand::Info { name } => ("info", Some(name.clone())),
            // The daemon runs elsewhere: send it an absolute path.
            PluginCommand::Install { dir } => (
                "install",
                Some(
                    std::path::absolute(dir)
                        .unwrap_or_else(|_| dir.clone())
                        .display()
                        .to_string(),
                ),
            ),
            PluginCommand::Enable { name } => ("enable", Some(name.clone())),
            PluginCommand::Disable { name } => ("disable", Some(name.clone())),
            PluginCommand::Reload { name } => ("reload", Some(name.clone())),
            PluginCommand::Remove { name } => ("remove", Some(name.clone())),
        };
        Request::Plugin {
            action: action.into(),
            name,
        }
    }
}

#[derive(Subcommand, Debug)]
enum SourceCommand {
    /// List sources and whether each is available.
    List,
    /// Add a source (kept in the daemon's data dir).
    Add(SourceArgs),
    /// Remove a source.
    Remove { name: String },
    /// Send a short test prompt through one source.
    Test { name: String },
}

#[derive(Args, Debug)]
struct SourceArgs {
    name: String,
    /// e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1
    #[arg(long)]
    base_url: String,
    #[arg(long)]
    model: String,
    /// openai, anthropic, gemini, ollama (or your own adapter's name).
    #[arg(long, default_value = "openai")]
    adapter: String,
    #[arg(
        long,
        env = "HEARTH_SOURCE_API_KEY",
        hide_env_values = true,
        default_value = ""
    )]
    api_key: String,
    #[arg(long, default_value_t = 0)]
    priority: i32,
    /// The model's context window in tokens (0 = unknown).
    #[arg(long, default_value_t = 0)]
    context_window: usize,
    /// The model takes images (sent as OpenAI `image_url` parts; the `openai` adapter).
    #[arg(long)]
    vision: bool,
    /// The model cannot call tools: its requests go without the tool list.
    #[arg(long)]
    no_tools: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("hearth: {e}");
            ExitCode::from(2)
        }
    }
}

/// The defaults, with the data dir the command line gives.
fn config(cli: &Cli) -> Config {
    let mut cfg = Config::default();
    if let Some(dir) = &cli.data_dir {
        cfg.data_dir = dir.clone();
    }
    cfg
}

fn socket_path(cli: &Cli) -> PathBuf {
    match &cli.socket {
        Some(s) => s.clone(),
        None => config(cli).socket_path(),
    }
}

fn run(cli: Cli) -> Result<ExitCode, ClientError> {
    if let Command::Bench(BenchCommand::Recall(args)) = &cli.command {
        return Ok(bench_recall(args));
    }
    if let Command::Bench(BenchCommand::Knowledge(args)) = &cli.command {
        return Ok(bench_knowledge::run(args));
    }
    if let Command::Bench(BenchCommand::Distill(args)) = &cli.command {
        return Ok(bench_distill::run(args));
    }
    if let Command::Store(command) = &cli.command {
        return Ok(store_command(command, &cli));
    }
    if let Command::Settings(args) = &cli.command {
        return Ok(settings::run(
            args,
            &socket_path(&cli),
            cli.key.as_deref(),
            cli.data_dir.as_deref(),
        ));
    }
    if let Command::Mcp(command) = &cli.command {
        // The running daemon, if one answers: its status, or a sync after a change.
        let daemon = |request: Request| {
            let mut client = Client::connect(&socket_path(&cli), cli.key.as_deref()).ok()?;
            client.request(&request, |_| {}).ok()
        };
        return Ok(mcp::run(command, &config(&cli).data_dir, daemon));
    }
    let path = socket_path(&cli);
    let mut client = Client::connect(&path, cli.key.as_deref())?;
    let request = match cli.command {
        Command::Send { text, attach } => {
            let media = match attach::blocks(&attach) {
                Ok(media) => media,
                Err(e) => {
                    eprintln!("hearth: {e}");
                    return Ok(ExitCode::from(2));
                }
            };
            return stream(
                &mut client,
                &Request::Send {
                    text: text.join(" "),
                    source: None,
                    media,
                },
            );
        }
        Command::Interrupt { level, text } => {
            return stream(
                &mut client,
                &Request::Interrupt {
                    text: text.join(" "),
                    level: Some(level),
                    source: None,
                },
            );
        }
        Command::Chat => return chat(client, &path, cli.key.as_deref()),
        Command::Memory(m) => {
            let answer = client.request(&m.request(), |_| {})?;
            return Ok(m.print(&answer).unwrap_or_else(|| print_terminal(&answer)));
        }
        Command::Bench(_) | Command::Store(_) | Command::Mcp(_) | Command::Settings(_) => {
            unreachable!("handled before connecting")
        }
        Command::Stop => Request::Stop,
        Command::Status => Request::Status,
        Command::Plugin(p) => p.request(),
        Command::Source(SourceCommand::List) => Request::SourceList,
        Command::Source(SourceCommand::Remove { name }) => Request::SourceRemove { name },
        Command::Source(SourceCommand::Test { name }) => Request::SourceTest { name },
        Command::Source(SourceCommand::Add(a)) => Request::SourceAdd {
            source: SourceConfig {
                name: a.name,
                base_url: a.base_url,
                model: a.model,
                api_key: a.api_key,
                adapter: a.adapter,
                priority: a.priority,
                context_window: a.context_window,
                vision: a.vision,
                no_tools: a.no_tools,
                ..SourceConfig::default()
            },
        },
    };
    let answer = client.request(&request, |_| {})?;
    Ok(print_terminal(&answer))
}

fn bench_recall(args: &RecallArgs) -> ExitCode {
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
    let configs: Vec<RecallConfig> = arms.iter().map(|a| a.1.clone()).collect();
    if args.prune {
        return bench_prune(args, &models, &chosen);
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
        Some(Ok(g)) => Some(g),
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
    use hearth_memory::recall_bench::{RecallSet, run_prune, sample};
    let mut progress = |line: &str| eprintln!("recall: {line}");
    let mut json = Vec::new();
    for &variant in &args.variant {
        let report = RecallSet::load(&args.file).and_then(|set| {
            let set = match args.sample {
                Some(n) => sample(set, n),
                None => set,
            };
            run_prune(&variant.apply(set), models, config, &mut progress)
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

fn store_command(command: &StoreCommand, cli: &Cli) -> ExitCode {
    let data_dir = config(cli).data_dir;
    let db = data_dir.join("memory.db");
    let outcome = match command {
        StoreCommand::Check => hearth_memory::Store::check(&db).map(|health| {
            outln!("{}: {health}", db.display());
            health.is_usable()
        }),
        // A daemon answering on the socket has the store open: recovering under it would lose
        // whatever it writes meanwhile.
        StoreCommand::Recover
            if std::os::unix::net::UnixStream::connect(socket_path(cli)).is_ok() =>
        {
            eprintln!(
                "hearth: hearthd is running on {}; stop it first",
                data_dir.display()
            );
            return ExitCode::from(1);
        }
        StoreCommand::Recover => hearth_memory::Store::recover(&db).map(|recovery| {
            outln!("{recovery}");
            true
        }),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("hearth: {e}");
            ExitCode::from(2)
        }
    }
}

/// Streams one request's deltas to stdout and prints its end.
fn stream(client: &mut Client, request: &Request) -> Result<ExitCode, ClientError> {
    let mut streamed = String::new();
    let answer = client.request(request, |delta| {
        if let Answer::Lag { missed } = delta {
            // The streamed text now has a hole: say so, and show the whole reply at the end.
            outln!(
                "\n[{missed} pieces of the answer were not shown: the output was too slow; the whole answer follows]"
            );
            streamed.push('\u{0}');
            return;
        }
        if let Answer::Delta {
            content,
            reasoning: false,
            reset,
        } = delta
        {
            if *reset && !streamed.is_empty() {
                outln!("\n[interrupted — the answer restarts]");
                streamed.clear();
            }
            streamed.push_str(content);
            out::write_bytes(content.as_bytes());
        }
    })?;
    match &answer {
        // The reply can differ from what streamed (a plugin rewrote it, or the turn used tools
        // and the final text came in a later call): show the reply when it does.
        Answer::Response { content, .. }
            if !streamed.is_empty() && content.trim() == streamed.trim() =>
        {
            outln!();
            Ok(ExitCode::SUCCESS)
        }
        Answer::Response { content, .. } => {
            if !streamed.is_empty() {
                outln!();
            }
            outln!("{content}");
            Ok(ExitCode::SUCCESS)
        }
        other => {
            if !streamed.is_empty() {
                outln!();
            }
            Ok(print_terminal(other))
        }
    }
}

fn print_terminal(answer: &Answer) -> ExitCode {
    match answer {
        Answer::Response { content, .. } => {
            outln!("{content}");
            ExitCode::SUCCESS
        }
        Answer::Status { status }
        | Answer::Sources { sources: status }
        | Answer::Plugins { plugins: status }
        | Answer::Memory { memory: status }
        | Answer::Mcp { mcp: status }
        | Answer::Settings { settings: status } => {
            outln!(
                "{}",
                serde_json::to_string_pretty(status).unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        Answer::Skipped { reason, .. } => {
            eprintln!("hearth: skipped ({reason})");
            ExitCode::from(3)
        }
        Answer::Error { error } => {
            eprintln!("hearth: {error}");
            ExitCode::from(1)
        }
        Answer::Delta { .. } | Answer::Accepted { .. } | Answer::Lag { .. } => ExitCode::SUCCESS,
    }
}

/// Interactive loop. SIGINT is taken by a thread that sends `stop` on its own connection, so
/// Ctrl-C stops the answer without killing the session.
fn chat(
    mut client: Client,
    path: &std::path::Path,
    key: Option<&str>,
) -> Result<ExitCode, ClientError> {
    let signals = hearth_runtime::signals::ShutdownSignals::install()
        .map_err(|e| ClientError::Io(e.into()))?;
    let (stop_path, stop_key) = (path.to_path_buf(), key.map(str::to_string));
    std::thread::spawn(move || {
        while signals.wait().is_ok() {
            if let Ok(mut c) = Client::connect(&stop_path, stop_key.as_deref()) {
                let _ = c.request(&Request::Stop, |_| {});
            }
        }
    });
    let stdin = std::io::stdin();
    loop {
        out!("> ");
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            outln!();
            return Ok(ExitCode::SUCCESS);
        }
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if matches!(text, "/quit" | "/exit") {
            return Ok(ExitCode::SUCCESS);
        }
        match Request::from_chat_line(text) {
            Ok(request) => {
                // The daemon closes connections idle for long (10 min by default): a session
                // left open meanwhile connects again instead of failing its next request.
                if client.closed_by_daemon() {
                    client = Client::connect(path, key)?;
                }
                stream(&mut client, &request)?;
            }
            Err(e) => eprintln!("hearth: {e}"),
        }
    }
}
