//! The client socket protocol: one JSON object per line in each direction.
//!
//! Requests carry an `op`; answers carry a `type`. A streamed request (`send`, `interrupt`)
//! gets `delta` lines as tokens arrive and then exactly one terminal line (`response`,
//! `skipped` or `error`), possibly with `lag` lines where a slow reader lost deltas. For
//! compatibility with the original's CLI, the `/`-command form is accepted as well: `/auth <key>`,
//! `/stop`, `/status`, `/help`, `/send <text>`. Any other line is refused: a stray protocol (an
//! HTTP request sent to the socket) never becomes a chat turn.

use hearth_kernel::input::Reply;
use hearth_llm::provider::SourceConfig;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One client line to `hearthd`, tagged by `op` (JSON) or written as a `/`-command.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// `/auth <key>`: must be a connection's first line when the daemon has an `api_key`; the
    /// right key is answered `authenticated`, anything else `unauthorized` and the connection
    /// closed. Once authenticated it is answered `authenticated` again.
    Auth {
        /// The daemon's `api_key` (`HEARTH_API_KEY`).
        key: String,
    },
    /// `hearth send TEXT` (or a plain line in `hearth chat`): a chat turn, journaled and queued;
    /// its answer streams back as `delta` lines and one terminal line.
    Send {
        /// What the operator said.
        text: String,
        /// The input's source name; `cli` when absent.
        #[serde(default)]
        source: Option<String>,
        /// Media sent with it, as content blocks (`{"type": "image_url", "image_url": {"url":
        /// "data:image/png;base64,…"}}`): stored in the media store before the input is
        /// acknowledged, and shown to the model and kept in memory as marker lines.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        media: Vec<serde_json::Value>,
    },
    /// `hearth interrupt --level L TEXT`: like `send`, but marked as an interrupt with a
    /// priority, so it can preempt the running turn.
    Interrupt {
        /// What the operator said.
        text: String,
        /// Priority `L1` (background) … `L4` (critical); `L1` when absent (the CLI sends `L3`).
        #[serde(default)]
        level: Option<String>,
        /// The input's source name; `cli` when absent.
        #[serde(default)]
        source: Option<String>,
    },
    /// `hearth stop` / `/stop`: stops the running turn (not journaled, never queued).
    Stop,
    /// `hearth status` / `/status`: the kernel's state snapshot, answered as `status`.
    Status,
    /// `hearth source list`: the configured LLM sources and their state, answered as `sources`.
    SourceList,
    /// `hearth source add …`: adds an LLM source and saves it to the configuration.
    SourceAdd {
        /// The source to add (name, base URL, model, …).
        source: SourceConfig,
    },
    /// `hearth source remove NAME`: removes an LLM source and saves the configuration.
    SourceRemove {
        /// The source's configured name.
        name: String,
    },
    /// `hearth source test NAME`: sends a short test request through that source.
    SourceTest {
        /// The source's configured name.
        name: String,
    },
    /// `hearth plugin ACTION [NAME|DIR]`: list, info, install, enable, disable, reload, remove.
    Plugin {
        /// One of `list`, `info`, `install`, `enable`, `disable`, `reload`, `remove`.
        action: String,
        /// The plugin's name (or, for `install`, its directory); absent for `list`.
        #[serde(default)]
        name: Option<String>,
    },
    /// `hearth mcp add|remove` on a running daemon: `sync` starts the MCP servers it is now
    /// configured with and does not run, and stops those it no longer is.
    Mcp {
        /// `sync`.
        action: String,
    },
    /// `hearth memory ACTION [ARG]`: search (ARG a query), show and why (ARG a fact id), forget
    /// (ARG a fact id), stats.
    Memory {
        /// One of `search`, `show`, `why`, `forget`, `stats`.
        action: String,
        /// The query (`search`) or the fact id (`show`, `why`, `forget`).
        #[serde(default)]
        arg: Option<String>,
        /// How many facts `search` returns: 10 when absent, clamped to 1..=100.
        #[serde(default)]
        k: Option<usize>,
    },
    /// `hearth settings get KEY`.
    SettingsGet {
        /// The setting's dotted key.
        key: String,
    },
    /// `hearth settings set KEY VALUE`: `value` as JSON, or `text` read by the key's type.
    SettingsSet {
        /// The setting's dotted key.
        key: String,
        /// The new value as JSON (takes precedence over `text`).
        #[serde(default)]
        value: Option<Value>,
        /// The new value as typed on the command line, parsed by the key's type.
        #[serde(default)]
        text: Option<String>,
    },
    /// `hearth settings reset KEY`: back to the file's value or the default.
    SettingsReset {
        /// The setting's dotted key.
        key: String,
    },
    /// `hearth settings list [PREFIX]`.
    SettingsList {
        /// Only keys starting with this; empty (the default) lists every setting.
        #[serde(default)]
        prefix: String,
    },
    /// `/help`: answered with [`HELP`] as a `response`.
    Help,
}

/// Why a line from a client is not a request; the text is what the client is answered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// A JSON object that is not a request (unknown op, a missing or mistyped field).
    #[error("bad request: {0}")]
    Json(String),
    /// Neither a JSON object nor a known `/`-command (plain text is a chat turn only in the
    /// interactive CLI).
    #[error("not a request: send one JSON object per line or a /command ({HELP_HINT})")]
    NotARequest,
    /// The line's bytes are not UTF-8.
    #[error("request is not valid UTF-8")]
    NotUtf8,
}

impl Request {
    /// A `send` of `text` from `cli`, with no media.
    pub fn send(text: impl Into<String>) -> Request {
        Request::Send {
            text: text.into(),
            source: None,
            media: Vec::new(),
        }
    }

    /// Parses a JSON request or a `/`-command; anything else is an error.
    pub fn parse(line: &str) -> Result<Request, RequestError> {
        let line = line.trim_end_matches(['\r', '\n']);
        if line.trim_start().starts_with('{') {
            return serde_json::from_str(line).map_err(|e| RequestError::Json(e.to_string()));
        }
        if let Some(key) = line.strip_prefix("/auth ") {
            return Ok(Request::Auth {
                key: key.trim().to_string(),
            });
        }
        if let Some(text) = line.strip_prefix("/send ") {
            return Ok(Request::Send {
                text: text.to_string(),
                source: None,
                media: Vec::new(),
            });
        }
        match line.trim() {
            "/stop" => Ok(Request::Stop),
            "/status" | "/kernel" => Ok(Request::Status),
            "/help" => Ok(Request::Help),
            _ => Err(RequestError::NotARequest),
        }
    }

    /// What a line typed in the interactive CLI means: a `/`-command, else text to send.
    pub fn from_chat_line(line: &str) -> Result<Request, RequestError> {
        if line.trim_start().starts_with(['/', '{']) {
            Self::parse(line)
        } else {
            Ok(Request::Send {
                text: line.to_string(),
                source: None,
                media: Vec::new(),
            })
        }
    }
}

const HELP_HINT: &str = "try /help";

/// One line from `hearthd` to a client, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Answer {
    /// The request is durable (journaled) and queued; its answer follows.
    Accepted {
        /// The id the request's later lines (and the journal) carry.
        request_id: String,
    },
    /// A streamed piece of the answer (`reset` = discard what was shown, the call was cut).
    Delta {
        /// The text added since the previous delta.
        content: String,
        /// True when this is the model's reasoning, not part of the answer; omitted when false.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        reasoning: bool,
        /// True when what was shown so far should be discarded; omitted when false.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        reset: bool,
    },
    /// The terminal answer of a request.
    Response {
        /// The whole answer text (or, for control requests, what was done).
        content: String,
        /// The request's id; empty for requests that are not journaled (control, `/help`).
        #[serde(default)]
        request_id: String,
    },
    /// Terminal: the request got no answer: denied, dropped before its reply, or skipped by
    /// the kernel.
    Skipped {
        /// Why it was skipped (e.g. denied, dropped).
        reason: String,
        /// The request's id; empty when unknown.
        #[serde(default)]
        request_id: String,
    },
    /// Terminal: the request was refused or failed (bad line, unknown control action, a
    /// failed turn, the daemon stopping).
    Error {
        /// What went wrong, for a person.
        error: String,
    },
    /// The answer to `status`.
    Status {
        /// The kernel's state snapshot as JSON.
        status: Value,
    },
    /// The answer to `source_list`.
    Sources {
        /// The configured sources and their state, as JSON.
        sources: Value,
    },
    /// The client read too slowly: `missed` deltas of the streamed answer were dropped here
    /// (the terminal line, which carries the whole answer, is never dropped).
    Lag {
        /// How many deltas were dropped.
        missed: u64,
    },
    /// `hearth plugin` answers: the plugin list or one plugin's state.
    Plugins {
        /// The plugin list or one plugin's state, as JSON.
        plugins: Value,
    },
    /// `hearth mcp` answers: what a sync started and stopped.
    Mcp {
        /// The action's result, as JSON.
        mcp: Value,
    },
    /// `hearth memory` answers: facts, a fact's provenance, what was forgotten, counts.
    Memory {
        /// The action's result, as JSON.
        memory: Value,
    },
    /// `hearth settings` answers: one setting, a list, or what a change did.
    Settings {
        /// The action's result, as JSON.
        settings: Value,
    },
}

impl Answer {
    /// An `error` line carrying `msg`.
    pub fn error(msg: impl Into<String>) -> Self {
        Answer::Error { error: msg.into() }
    }

    /// The answer to a good `auth` line.
    pub fn authenticated() -> Self {
        Answer::Response {
            content: "authenticated".into(),
            request_id: String::new(),
        }
    }

    /// The terminal line of a reply.
    pub fn terminal(reply: Reply) -> Answer {
        if reply.skipped {
            Answer::Skipped {
                reason: reply.reason.unwrap_or_default(),
                request_id: reply.request_id,
            }
        } else if reply.error {
            Answer::Error {
                error: reply.content,
            }
        } else {
            Answer::Response {
                content: reply.content,
                request_id: reply.request_id,
            }
        }
    }

    /// This answer as one line of JSON, newline included, ready to write to the socket.
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).expect("answers always serialise");
        line.push('\n');
        line
    }

    /// Whether this line ends a streamed request.
    pub fn is_terminal(&self) -> bool {
        !matches!(
            self,
            Answer::Delta { .. } | Answer::Accepted { .. } | Answer::Lag { .. }
        )
    }
}

/// A `delta` line borrowed from where the text already is (the event ring's slot): the same
/// bytes as [`Answer::Delta`], written without building an owned answer first, because the
/// streaming path writes one per token.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename = "delta")]
pub(super) struct DeltaLine<'a> {
    /// The text added since the previous delta.
    pub(super) content: &'a str,
    /// True when this is the model's reasoning.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(super) reasoning: bool,
    /// True when what was shown so far should be discarded.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(super) reset: bool,
}

impl DeltaLine<'_> {
    /// Appends this line, newline included, to `buf`.
    pub(super) fn write_to(&self, buf: &mut Vec<u8>) {
        serde_json::to_writer(&mut *buf, self).expect("a delta always serialises");
        buf.push(b'\n');
    }
}

/// The text `/help` answers with: the `/`-commands and the JSON request forms.
pub const HELP: &str = "commands: /send <text> | /stop | /status | /help; JSON requests: \
{\"op\":\"send\",\"text\":…} {\"op\":\"interrupt\",\"text\":…,\"level\":\"L3\"} {\"op\":\"stop\"} {\"op\":\"status\"} \
{\"op\":\"source_list\"} {\"op\":\"source_add\",\"source\":{…}} {\"op\":\"source_remove\",\"name\":…} {\"op\":\"source_test\",\"name\":…} {\"op\":\"plugin\",\"action\":\"list\",\"name\":…} {\"op\":\"memory\",\"action\":\"search\",\"arg\":…} \\
{\"op\":\"settings_get\",\"key\":…} {\"op\":\"settings_set\",\"key\":…,\"value\":…} {\"op\":\"settings_reset\",\"key\":…} {\"op\":\"settings_list\",\"prefix\":…}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_plain_lines_parse() {
        assert_eq!(
            Request::parse(r#"{"op":"send","text":"hi"}"#),
            Ok(Request::Send {
                text: "hi".into(),
                source: None,
                media: Vec::new(),
            })
        );
        assert_eq!(
            Request::parse("/auth  k1 \n"),
            Ok(Request::Auth { key: "k1".into() })
        );
        assert_eq!(Request::parse("/stop"), Ok(Request::Stop));
        assert_eq!(
            Request::parse("/send what time is it?"),
            Ok(Request::Send {
                text: "what time is it?".into(),
                source: None,
                media: Vec::new(),
            })
        );
        assert_eq!(
            Request::parse("GET / HTTP/1.1\r\n"),
            Err(RequestError::NotARequest),
            "a stray protocol is refused"
        );
        assert!(
            RequestError::NotARequest
                .to_string()
                .starts_with("not a request")
        );
        assert!(Request::parse("what time is it?").is_err());
        assert_eq!(
            Request::from_chat_line("what time is it?"),
            Ok(Request::Send {
                text: "what time is it?".into(),
                source: None,
                media: Vec::new(),
            })
        );
        assert_eq!(Request::from_chat_line("/stop"), Ok(Request::Stop));
        assert!(Request::from_chat_line("/bogus").is_err());
        assert!(matches!(
            Request::parse(r#"{"op":"launch"}"#),
            Err(RequestError::Json(e)) if e.contains("launch")
        ));
        assert!(Request::parse(r#"{"op":"send"}"#).is_err(), "missing text");
    }

    #[test]
    fn answers_are_single_lines_with_a_type() {
        let line = Answer::Delta {
            content: "a\nb".into(),
            reasoning: false,
            reset: false,
        }
        .to_line();
        assert_eq!(line.matches('\n').count(), 1);
        assert_eq!(line, "{\"type\":\"delta\",\"content\":\"a\\nb\"}\n");
        assert!(Answer::error("x").is_terminal());
        assert!(!Answer::Lag { missed: 3 }.is_terminal());
        assert_eq!(
            Answer::Lag { missed: 3 }.to_line(),
            "{\"type\":\"lag\",\"missed\":3}\n"
        );
    }

    /// The borrowed delta line the stream writes is byte for byte the answer a client parses.
    #[test]
    fn a_borrowed_delta_line_is_the_delta_answer() {
        for (content, reasoning, reset) in [
            ("plain", false, false),
            ("a \"quoted\"\nline \u{1F525}", true, false),
            ("", false, true),
            ("\u{7}", true, true),
        ] {
            let mut buf = b"kept".to_vec();
            DeltaLine {
                content,
                reasoning,
                reset,
            }
            .write_to(&mut buf);
            let owned = Answer::Delta {
                content: content.into(),
                reasoning,
                reset,
            }
            .to_line();
            assert_eq!(buf, [b"kept", owned.as_bytes()].concat(), "{owned}");
        }
    }
}
