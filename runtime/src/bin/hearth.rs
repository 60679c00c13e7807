//! hearth — the command line client of hearthd, over its Unix socket.

use clap::{Args, Parser, Subcommand};
use hearth_llm::provider::SourceConfig;
use hearth_runtime::config::Config;
use hearth_runtime::socket::{Answer, Client, ClientError, Request};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

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
    /// latency, ingest throughput).
    Recall {
        /// The data set (format `hearth-recall/1`).
        file: PathBuf,
        /// The k values to report.
        #[arg(long, value_delimiter = ',', default_value = "1,5,10")]
        k: Vec<usize>,
        /// Keyword recall only (no embedding model).
        #[arg(long)]
        no_model: bool,
        /// Where `make setup` put the embedding model (default: the user cache dir).
        #[arg(long)]
        model_dir: Option<PathBuf>,
        /// Keep each corpus's store in this directory and reuse it when it already holds every
        /// item (re-measures ranking without re-embedding; ingest is then not measured).
        #[arg(long)]
        store_dir: Option<PathBuf>,
    },
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
    if let Command::Bench(BenchCommand::Recall {
        file,
        k,
        no_model,
        model_dir,
        store_dir,
    }) = &cli.command
    {
        return Ok(bench_recall(
            file,
            k,
            *no_model,
            model_dir.clone(),
            store_dir.as_deref(),
        ));
    }
    if let Command::Store(command) = &cli.command {
        return Ok(store_command(command, &cli));
    }
    let path = socket_path(&cli);
    let mut client = Client::connect(&path, cli.key.as_deref())?;
    let request = match cli.command {
        Command::Send { text } => {
            return stream(
                &mut client,
                &Request::Send {
                    text: text.join(" "),
                    source: None,
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
        Command::Bench(_) | Command::Store(_) => unreachable!("handled before connecting"),
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
                ..SourceConfig::default()
            },
        },
    };
    let answer = client.request(&request, |_| {})?;
    Ok(print_terminal(&answer))
}

fn bench_recall(
    file: &std::path::Path,
    ks: &[usize],
    no_model: bool,
    model_dir: Option<PathBuf>,
    store_dir: Option<&std::path::Path>,
) -> ExitCode {
    use hearth_memory::recall_bench::{Measure, System};
    use hearth_memory::{MemoryModels, RecallConfig};
    let models = if no_model {
        MemoryModels::default()
    } else {
        MemoryModels::load(model_dir, 1)
    };
    // With a companion the same run also ranks without it (its weight 0): the gain it brings,
    // measured on the same ingest and the same machine state.
    let mut configs = vec![RecallConfig::default()];
    if models.companion.is_some() {
        configs.push(RecallConfig {
            companion_weight: 0.0,
            ..RecallConfig::default()
        });
    }
    let progress = |line: &str| eprintln!("recall: {line}");
    match hearth_memory::recall_bench::run_configs(file, ks, &models, &configs, store_dir, progress)
    {
        Ok(reports) => {
            println!("{}", reports[0].render());
            if let Some(without) = reports.get(1) {
                let at: Vec<String> = ks
                    .iter()
                    .map(|&k| {
                        format!(
                            "@{k} {:.3} (with {:.3})",
                            without.recall_at(System::Hearth, Measure::TurnAny, k),
                            reports[0].recall_at(System::Hearth, Measure::TurnAny, k)
                        )
                    })
                    .collect();
                println!(
                    "same run without the companion model: turn_any {}; query p50 {:.1} ms, p99 {:.1} ms",
                    at.join(", "),
                    without.hearth_latency.p50.as_secs_f64() * 1e3,
                    without.hearth_latency.p99.as_secs_f64() * 1e3,
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hearth: {e}");
            ExitCode::from(1)
        }
    }
}

fn store_command(command: &StoreCommand, cli: &Cli) -> ExitCode {
    let data_dir = config(cli).data_dir;
    let db = data_dir.join("memory.db");
    let outcome = match command {
        StoreCommand::Check => hearth_memory::Store::check(&db).map(|health| {
            println!("{}: {health}", db.display());
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
            println!("{recovery}");
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
    let stdout = std::io::stdout();
    let answer = client.request(request, |delta| {
        if let Answer::Delta {
            content,
            reasoning: false,
            reset,
        } = delta
        {
            let mut out = stdout.lock();
            if *reset && !streamed.is_empty() {
                let _ = writeln!(out, "\n[interrupted — the answer restarts]");
                streamed.clear();
            }
            streamed.push_str(content);
            let _ = out.write_all(content.as_bytes());
            let _ = out.flush();
        }
    })?;
    match &answer {
        // The reply can differ from what streamed (a plugin rewrote it, or the turn used tools
        // and the final text came in a later call): show the reply when it does.
        Answer::Response { content, .. }
            if !streamed.is_empty() && content.trim() == streamed.trim() =>
        {
            println!();
            Ok(ExitCode::SUCCESS)
        }
        Answer::Response { content, .. } => {
            if !streamed.is_empty() {
                println!();
            }
            println!("{content}");
            Ok(ExitCode::SUCCESS)
        }
        other => {
            if !streamed.is_empty() {
                println!();
            }
            Ok(print_terminal(other))
        }
    }
}

fn print_terminal(answer: &Answer) -> ExitCode {
    match answer {
        Answer::Response { content, .. } => {
            println!("{content}");
            ExitCode::SUCCESS
        }
        Answer::Status { status }
        | Answer::Sources { sources: status }
        | Answer::Plugins { plugins: status } => {
            println!(
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
        Answer::Delta { .. } | Answer::Accepted { .. } => ExitCode::SUCCESS,
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
        print!("> ");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            println!();
            return Ok(ExitCode::SUCCESS);
        }
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if matches!(text, "/quit" | "/exit") {
            return Ok(ExitCode::SUCCESS);
        }
        stream(
            &mut client,
            &Request::parse(text).map_err(ClientError::Protocol)?,
        )?;
    }
}
