//! `hearth settings get|set|reset|list`: through the running daemon (it owns `settings.db`),
//! or on the file itself when no daemon answers (refused while another process holds it).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Subcommand};
use hearth_runtime::config::Config;
use hearth_runtime::daemon::{SettingsOp, SettingsService, open_settings};
use hearth_runtime::socket::{Answer, Client, ClientError, Request};
use serde_json::Value;

#[derive(Args, Debug)]
pub struct SettingsArgs {
    /// The configuration file the daemon was started with (`hearth.toml`), for the file layer
    /// when no daemon runs.
    #[arg(long, short, env = "HEARTH_CONFIG", global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: SettingsCommand,
}

#[derive(Subcommand, Debug)]
pub enum SettingsCommand {
    /// Every key under PREFIX (all without one), with its value.
    List {
        prefix: Option<String>,
        /// Also say where each value comes from: default, file (hearth.toml) or user.
        #[arg(long)]
        origin: bool,
    },
    /// One key's value.
    Get {
        // Not `key`: that is the global `--key` (the socket's API key) and would take its place.
        #[arg(value_name = "KEY")]
        setting: String,
        /// Also say where the value comes from and what the key means.
        #[arg(long)]
        origin: bool,
    },
    /// Set a key; VALUE is read by the key's type (text for a string, JSON otherwise:
    /// `true`, `4`, `["/srv/notes"]`).
    Set {
        #[arg(value_name = "KEY")]
        setting: String,
        #[arg(allow_hyphen_values = true)]
        value: String,
    },
    /// Forget the value set: the file's value or the default applies again.
    Reset {
        #[arg(value_name = "KEY")]
        setting: String,
    },
}

impl SettingsCommand {
    fn op(&self) -> SettingsOp {
        match self {
            SettingsCommand::List { prefix, .. } => {
                SettingsOp::List(prefix.clone().unwrap_or_default())
            }
            SettingsCommand::Get { setting, .. } => SettingsOp::Get(setting.clone()),
            SettingsCommand::Set { setting, value } => SettingsOp::Set {
                key: setting.clone(),
                value: None,
                text: Some(value.clone()),
            },
            SettingsCommand::Reset { setting } => SettingsOp::Reset(setting.clone()),
        }
    }

    fn request(&self) -> Request {
        match self {
            SettingsCommand::List { prefix, .. } => Request::SettingsList {
                prefix: prefix.clone().unwrap_or_default(),
            },
            SettingsCommand::Get { setting, .. } => Request::SettingsGet {
                key: setting.clone(),
            },
            SettingsCommand::Set { setting, value } => Request::SettingsSet {
                key: setting.clone(),
                value: None,
                text: Some(value.clone()),
            },
            SettingsCommand::Reset { setting } => Request::SettingsReset {
                key: setting.clone(),
            },
        }
    }

    fn origin(&self) -> bool {
        matches!(
            self,
            SettingsCommand::List { origin: true, .. } | SettingsCommand::Get { origin: true, .. }
        )
    }
}

/// Runs the command against the daemon at `socket`, or on the file in `data_dir`.
pub fn run(
    args: &SettingsArgs,
    socket: &Path,
    key: Option<&str>,
    data_dir: Option<&Path>,
) -> ExitCode {
    let answer = match Client::connect(socket, key) {
        Ok(mut client) => match client.request(&args.command.request(), |_| {}) {
            Ok(Answer::Settings { settings }) => Ok(settings),
            Ok(Answer::Error { error }) => Err(error),
            Ok(other) => Err(format!("unexpected answer {other:?}")),
            Err(e) => Err(e.to_string()),
        },
        Err(ClientError::Connect { .. }) => offline(args, data_dir),
        Err(e) => Err(e.to_string()),
    };
    match answer {
        Ok(value) => {
            print(&args.command, &value);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hearth: {e}");
            ExitCode::from(1)
        }
    }
}

/// No daemon answers: the file itself, with the same checks the daemon makes.
fn offline(args: &SettingsArgs, data_dir: Option<&Path>) -> Result<Value, String> {
    let mut cfg = Config::load(args.config.as_deref()).map_err(|e| e.to_string())?;
    if let Some(dir) = data_dir {
        cfg.data_dir = dir.to_owned();
    }
    let settings = open_settings(&cfg).map_err(|e| e.to_string())?;
    SettingsService::new(Arc::new(settings), cfg, None)
        .serve(args.command.op())
        .map_err(|e| e.to_string())
}

fn print(command: &SettingsCommand, answer: &Value) {
    let origin = command.origin();
    match command {
        SettingsCommand::List { .. } => {
            for s in answer.as_array().into_iter().flatten() {
                outln!("{}", line(s, origin));
            }
        }
        SettingsCommand::Get { .. } if origin => {
            outln!("{}", line(answer, true));
            if let Some(d) = answer["def"]["description"].as_str() {
                outln!("  {d}");
            }
        }
        SettingsCommand::Get { .. } => outln!("{}", shown(&answer["value"])),
        SettingsCommand::Set { .. } | SettingsCommand::Reset { .. } => {
            outln!("{}", line(&answer["setting"], true));
            if let Some(applied) = answer["applied"].as_str() {
                outln!("  {applied}");
            }
        }
    }
}

/// `key = value`, with `--origin`: `  [origin]`, and the file's value a user value hides.
fn line(s: &Value, origin: bool) -> String {
    let mut out = format!(
        "{} = {}",
        s["key"].as_str().unwrap_or_default(),
        serde_json::to_string(&s["value"]).unwrap_or_default()
    );
    if origin {
        out.push_str(&format!(
            "  [{}]",
            s["origin"].as_str().unwrap_or("default")
        ));
        if !s["file_value"].is_null() {
            out.push_str(&format!(
                " (hearth.toml says {})",
                serde_json::to_string(&s["file_value"]).unwrap_or_default()
            ));
        }
    }
    out
}

/// A value as `get` prints it: a string as its text, anything else as JSON.
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
