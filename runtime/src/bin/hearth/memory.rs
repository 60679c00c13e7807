//! `hearth memory search|show|why|forget|stats`: the daemon's graph memory, over the socket.

use clap::Subcommand;
use hearth_runtime::socket::{Answer, Request};
use serde_json::Value;
use std::process::ExitCode;

#[derive(Subcommand, Debug)]
pub enum MemoryCommand {
    /// Facts for a query, current and past, each with its id and source sentence.
    Search {
        /// How many facts.
        #[arg(long, default_value_t = 10)]
        k: usize,
        query: Vec<String>,
    },
    /// One fact: what it says, whether it holds, what replaced it.
    Show { id: String },
    /// Why a fact is believed: the sentences and turns it came from.
    Why { id: String },
    /// Forget a fact by id; it is not distilled again from the same conversation.
    Forget { id: String },
    /// What the graph holds and how far distillation got.
    Stats,
}

impl MemoryCommand {
    /// The control request for this command.
    pub fn request(&self) -> Request {
        let (action, arg, k) = match self {
            MemoryCommand::Search { k, query } => ("search", Some(query.join(" ")), Some(*k)),
            MemoryCommand::Show { id } => ("show", Some(id.clone()), None),
            MemoryCommand::Why { id } => ("why", Some(id.clone()), None),
            MemoryCommand::Forget { id } => ("forget", Some(id.clone()), None),
            MemoryCommand::Stats => ("stats", None, None),
        };
        Request::Memory {
            action: action.into(),
            arg,
            k,
        }
    }

    /// Prints the daemon's answer for a person.
    pub fn print(&self, answer: &Answer) -> Option<ExitCode> {
        let Answer::Memory { memory } = answer else {
            return None;
        };
        let text = |v: &Value, key: &str| v[key].as_str().unwrap_or_default().to_string();
        match self {
            MemoryCommand::Search { .. } => {
                let hits = memory.as_array().map(Vec::as_slice).unwrap_or_default();
                if hits.is_empty() {
                    println!("no matching facts");
                }
                for hit in hits {
                    println!("{}\n    \"{}\"", text(hit, "line"), text(hit, "sentence"));
                }
            }
            MemoryCommand::Show { .. } => {
                println!(
                    "{} {} ({})",
                    text(memory, "id"),
                    text(memory, "fact"),
                    text(memory, "status")
                );
                if let Some(by) = memory["superseded_by"].as_str() {
                    println!("superseded by {by}");
                }
            }
            MemoryCommand::Why { .. } => {
                println!("{} {}", text(memory, "id"), text(memory, "fact"));
                for source in memory["sources"].as_array().into_iter().flatten() {
                    println!(
                        "  {}: \"{}\" (turn {}, cold item {})",
                        text(source, "role"),
                        text(source, "sentence"),
                        text(source, "turn"),
                        source["cold_item"]
                    );
                }
            }
            MemoryCommand::Forget { .. } => {
                println!(
                    "forgot {}: {} ({} source sentences)",
                    text(memory, "id"),
                    text(memory, "removed"),
                    memory["sources"]
                );
            }
            MemoryCommand::Stats => {
                println!(
                    "{}",
                    serde_json::to_string_pretty(memory).unwrap_or_default()
                );
            }
        }
        Some(ExitCode::SUCCESS)
    }
}
