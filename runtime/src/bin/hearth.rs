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
#[path = "hearth/bench_recall.rs"]
mod bench_recall;
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
    Recall(bench_recall::RecallArgs),
    /// Search quality of the knowledge base on a `hearth-recall/1` file's sessions as documents,
    /// beside its keywords alone and a plain BM25 measured in the same run (hit@k, latency).
    Knowledge(bench_knowledge::KnowledgeArgs),
    /// Precision and recall of the rule distiller and the model distiller on labelled
    /// sentences (the model reached through the daemon's sources).
    Distill(bench_distill::DistillArgs),
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
        return Ok(bench_recall::run(args));
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
