//! `hearth memory search|recall|show|why|forget|stats|media`: the daemon's graph memory, its
//! remembered turns and its media store, over the socket.

use clap::Subcommand;
use hearth_runtime::daemon::{ENTRY_PREFIX, WINDOW_PREFIX};
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
    /// Remembered turns for a query, as recall would remind the model of them, each with its
    /// id (`c45`), after the turns still in the working window that hold its words (`w12`,
    /// marked recent); reads only (nothing counts as recalled).
    Recall {
        /// How many entries.
        #[arg(long, default_value_t = 10)]
        k: usize,
        query: Vec<String>,
    },
    /// One fact: what it says, whether it holds, what replaced it.
    Show { id: String },
    /// Why a fact is believed: the sentences and turns it came from.
    Why { id: String },
    /// Forget a fact (`r12`, `e3`) by id: it is not distilled again from the same conversation
    /// and its sentence leaves the remembered turns. Or forget a remembered turn (`c45`, or
    /// `w12` for one still in the working window), with the facts only it told.
    Forget { id: String },
    /// What the graph holds and how far distillation got.
    Stats,
    /// An image or file kept in the media store, by the sha256 its marker line shows: written
    /// to `--output` (its description on stderr).
    Media {
        /// The digest, or the twelve characters a marker shows.
        name: String,
        /// Where to write the item's bytes (`-` for standard output).
        #[arg(long, short)]
        output: std::path::PathBuf,
    },
}

impl MemoryCommand {
    /// The control request for this command.
    pub fn request(&self) -> Request {
        let (action, arg, k) = match self {
            MemoryCommand::Search { k, query } => ("search", Some(query.join(" ")), Some(*k)),
            MemoryCommand::Recall { k, query } => ("recall", Some(query.join(" ")), Some(*k)),
            MemoryCommand::Show { id } => ("show", Some(id.clone()), None),
            MemoryCommand::Why { id } => ("why", Some(id.clone()), None),
            MemoryCommand::Forget { id } => ("forget", Some(id.clone()), None),
            MemoryCommand::Stats => ("stats", None, None),
            MemoryCommand::Media { name, .. } => ("media", Some(name.clone()), None),
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
                    outln!("no matching facts");
                }
                for hit in hits {
                    outln!("{}\n    \"{}\"", text(hit, "line"), text(hit, "sentence"));
                }
            }
            MemoryCommand::Recall { .. } => {
                let items = memory.as_array().map(Vec::as_slice).unwrap_or_default();
                if items.is_empty() {
                    outln!("no matching remembered turns");
                }
                for item in items {
                    let recent = if item["recent"] == true {
                        "  (recent)"
                    } else {
                        ""
                    };
                    outln!(
                        "{}  {}  {}{recent}",
                        text(item, "ref"),
                        text(item, "at"),
                        text(item, "text").replace('\n', " ")
                    );
                }
            }
            MemoryCommand::Show { .. } => {
                outln!(
                    "{} {} ({})",
                    text(memory, "id"),
                    text(memory, "fact"),
                    text(memory, "status")
                );
                if let Some(by) = memory["superseded_by"].as_str() {
                    outln!("superseded by {by}");
                }
            }
            MemoryCommand::Why { .. } => {
                outln!("{} {}", text(memory, "id"), text(memory, "fact"));
                for source in memory["sources"].as_array().into_iter().flatten() {
                    outln!(
                        "  {}: \"{}\" (turn {}, cold item {})",
                        text(source, "role"),
                        text(source, "sentence"),
                        text(source, "turn"),
                        source["cold_item"]
                    );
                }
            }
            MemoryCommand::Forget { id }
                if id.starts_with(ENTRY_PREFIX) || id.starts_with(WINDOW_PREFIX) =>
            {
                // The other entries of the turn: for a `c45`, those besides the one asked for;
                // for a `w12`, every entry its turn had in cold context.
                let asked_entry = usize::from(id.starts_with(ENTRY_PREFIX));
                let twins: Vec<String> = memory["entries"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .skip(asked_entry)
                    .map(|e| format!("{ENTRY_PREFIX}{e}"))
                    .collect();
                if memory["when_answered"] == true {
                    outln!(
                        "{id} is still being answered: its whole turn is forgotten as soon as its answer is in"
                    );
                } else if twins.is_empty() {
                    outln!("forgot {id}");
                } else {
                    outln!("forgot {id} and {} (the same turn)", twins.join(", "));
                }
                for fact in memory["facts_forgotten"].as_array().into_iter().flatten() {
                    outln!(
                        "  and {}: {} (only that turn told it)",
                        text(fact, "id"),
                        text(fact, "removed")
                    );
                }
                print_words_out(memory);
            }
            MemoryCommand::Forget { .. } => {
                outln!(
                    "forgot {}: {} ({} source sentences)",
                    text(memory, "id"),
                    text(memory, "removed"),
                    memory["sources"]
                );
                print_words_out(memory);
                for kept in memory["sentences_kept"].as_array().into_iter().flatten() {
                    let facts: Vec<&str> = kept["source_of"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .collect();
                    outln!(
                        "  kept \"{}\": still the source of {}",
                        text(kept, "sentence"),
                        facts.join(", ")
                    );
                }
            }
            MemoryCommand::Stats => {
                outln!(
                    "{}",
                    serde_json::to_string_pretty(memory).unwrap_or_default()
                );
            }
            MemoryCommand::Media { output, .. } => return Some(write_media(memory, output)),
        }
        Some(ExitCode::SUCCESS)
    }
}

/// Where a forget took a fact's words out of, when it did.
fn print_words_out(memory: &Value) {
    let out = &memory["words_taken_out"];
    if out.is_object() {
        outln!(
            "  its words taken out of {} remembered turns, {} window events, {} journal entries",
            out["cold_entries"],
            out["window_events"],
            out["journal_entries"]
        );
    }
}

/// Writes an item the daemon sent (base64 in `data`) to `output`, its description to stderr.
fn write_media(item: &Value, output: &std::path::Path) -> ExitCode {
    use base64::Engine;
    let Some(bytes) = item["data"]
        .as_str()
        .and_then(|d| base64::engine::general_purpose::STANDARD.decode(d).ok())
    else {
        eprintln!("hearth: the daemon sent no readable item");
        return ExitCode::from(1);
    };
    let written = if output.as_os_str() == "-" {
        crate::out::write_bytes(&bytes);
        Ok(())
    } else {
        std::fs::write(output, &bytes)
    };
    if let Err(e) = written {
        eprintln!("hearth: {}: {e}", output.display());
        return ExitCode::from(1);
    }
    eprintln!(
        "{} {} ({} bytes) sha256:{}",
        item["kind"].as_str().unwrap_or_default(),
        item["mime"].as_str().unwrap_or_default(),
        bytes.len(),
        item["digest"].as_str().unwrap_or_default()
    );
    ExitCode::SUCCESS
}
