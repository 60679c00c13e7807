//! `hearth mcp add|list|remove|test`: the servers kept in `<data_dir>/mcp.toml` (the daemon
//! starts them with the `[[mcp]]` entries of `hearth.toml`; a running one is told to sync at
//! once), and a local probe of one.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Subcommand};
use hearth_mcp::{McpServer, McpServerConfig, McpStore};
use hearth_runtime::socket::{Answer, Request};
use hearth_stages::ToolRegistry;

#[derive(Subcommand, Debug)]
pub enum McpCommand {
    /// Keep a server: `hearth mcp add fs -- npx -y @modelcontextprotocol/server-filesystem ~/notes`
    /// or `hearth mcp add web --url http://127.0.0.1:3001/mcp`. A running hearthd starts it.
    Add(AddArgs),
    /// The kept servers, and what the running daemon has connected.
    List,
    /// Forget a kept server (a running hearthd stops it).
    Remove { name: String },
    /// Start a kept server once here (not in the daemon), list what it offers, stop it.
    Test { name: String },
}

#[derive(Args, Debug)]
pub struct AddArgs {
    /// Prefixes its tools (`<name>_<tool>`): letters, digits and `-`.
    name: String,
    /// A Streamable HTTP endpoint instead of a command.
    #[arg(long)]
    url: Option<String>,
    /// `KEY=VALUE` for the server's environment (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// `KEY=VALUE` HTTP header, e.g. an Authorization token (repeatable).
    #[arg(long = "header", value_name = "KEY=VALUE")]
    headers: Vec<String>,
    /// Longest wait for one request, in seconds.
    #[arg(long)]
    timeout_secs: Option<u64>,
    /// The command and its arguments (after `--`).
    #[arg(last = true)]
    command: Vec<String>,
}

fn pairs(items: &[String], what: &str) -> Result<Vec<(String, String)>, String> {
    items
        .iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .ok_or_else(|| format!("{what} {kv:?} must be KEY=VALUE"))
        })
        .collect()
}

impl AddArgs {
    fn entry(&self) -> Result<McpServerConfig, String> {
        let (command, args) = match self.command.split_first() {
            Some((c, rest)) => (Some(c.clone()), rest.to_vec()),
            None => (None, Vec::new()),
        };
        Ok(McpServerConfig {
            name: self.name.clone(),
            command,
            args,
            env: pairs(&self.env, "--env")?.into_iter().collect(),
            url: self.url.clone(),
            headers: pairs(&self.headers, "--header")?.into_iter().collect(),
            timeout_secs: self.timeout_secs,
            disabled: false,
        })
    }
}

/// What a running daemon made of the change, in words for the user.
fn synced(daemon: impl FnOnce(Request) -> Option<Answer>) -> String {
    match daemon(Request::Mcp {
        action: "sync".into(),
    }) {
        None => "hearthd is not running; it starts with them".into(),
        Some(Answer::Mcp { mcp }) => format!("the running hearthd synced: {mcp}"),
        Some(Answer::Error { error }) => format!("the running hearthd refused to sync: {error}"),
        Some(_) => "the running hearthd answered something else; restart it to apply".into(),
    }
}

/// Runs one command against the store of `data_dir`; `daemon` asks the running daemon, if one
/// answers.
pub fn run(
    command: &McpCommand,
    data_dir: &Path,
    daemon: impl FnOnce(Request) -> Option<Answer>,
) -> ExitCode {
    let store = McpStore::new(data_dir);
    let outcome = match command {
        McpCommand::Add(args) => args
            .entry()
            .and_then(|e| store.add(e).map_err(|e| e.to_string()))
            .map(|()| {
                outln!(
                    "added {} to {}; {}",
                    args.name,
                    store.path().display(),
                    synced(daemon)
                )
            }),
        McpCommand::Remove { name } => match store.remove(name) {
            Ok(true) => {
                outln!("removed {name}; {}", synced(daemon));
                Ok(())
            }
            Ok(false) => Err(format!("no server {name} in {}", store.path().display())),
            Err(e) => Err(e.to_string()),
        },
        McpCommand::List => store.load().map_err(|e| e.to_string()).map(|kept| {
            let kept = serde_json::to_value(&kept).unwrap_or_default();
            let report = serde_json::json!({
                "kept": kept,
                "daemon": match daemon(Request::Status) {
                    Some(Answer::Status { status }) => Some(status["mcp"].clone()),
                    _ => None,
                },
            });
            outln!(
                "{}",
                serde_json::to_string_pretty(&report).unwrap_or_default()
            );
        }),
        McpCommand::Test { name } => test(&store, name),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hearth: {e}");
            ExitCode::from(1)
        }
    }
}

fn test(store: &McpStore, name: &str) -> Result<(), String> {
    let entry = store
        .load()
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|e| e.name == name)
        .ok_or_else(|| format!("no server {name} in {}", store.path().display()))?;
    let server = McpServer::new(entry, Arc::new(ToolRegistry::new())).map_err(|e| e.to_string())?;
    let report = server.probe().map_err(|e| e.to_string())?;
    outln!(
        "{}",
        serde_json::to_string_pretty(&report).unwrap_or_default()
    );
    Ok(())
}
