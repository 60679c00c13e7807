//! One `[[mcp]]` entry of `hearth.toml`: a stdio server (`command`, `args`, `env`) or a
//! Streamable HTTP one (`url`, `headers`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::McpError;

/// Longest server name: it prefixes every tool name, which must stay within 64 characters.
pub const MAX_SERVER_NAME_LEN: usize = 24;

/// How one MCP server is reached.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerConfig {
    /// Prefixes the server's tools (`<name>_<tool>`); `[a-zA-Z0-9-]`, at most 24 characters.
    pub name: String,
    /// The program of a stdio server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment of the process.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The endpoint of a Streamable HTTP server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Extra HTTP headers (an `Authorization` token).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Longest wait for one tool call in seconds when the task sets no sooner deadline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// A disabled server is kept in the file but not started.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
}

/// Where a server is, once its entry is validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint<'a> {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio {
        /// The program.
        command: &'a str,
    },
    /// An HTTP endpoint taking POSTs and answering JSON or an event stream.
    Http {
        /// The endpoint.
        url: &'a str,
    },
}

impl McpServerConfig {
    /// A stdio server entry.
    pub fn stdio(name: &str, command: &str, args: &[&str]) -> McpServerConfig {
        McpServerConfig {
            name: name.to_owned(),
            command: Some(command.to_owned()),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            ..McpServerConfig::default()
        }
    }

    /// A Streamable HTTP server entry.
    pub fn http(name: &str, url: &str) -> McpServerConfig {
        McpServerConfig {
            name: name.to_owned(),
            url: Some(url.to_owned()),
            ..McpServerConfig::default()
        }
    }

    /// Checks the entry and says which transport it uses.
    pub fn endpoint(&self) -> Result<Endpoint<'_>, McpError> {
        let bad = |reason: String| McpError::Config {
            name: self.name.clone(),
            reason,
        };
        validate_server_name(&self.name)?;
        match (self.command.as_deref(), self.url.as_deref()) {
            (Some(_), Some(_)) => Err(bad(
                "set either `command` (a stdio server) or `url` (an HTTP server), not both".into(),
            )),
            (None, None) => Err(bad(
                "set `command` (a stdio server) or `url` (an HTTP server)".into(),
            )),
            (Some(""), None) => Err(bad("`command` is empty".into())),
            (Some(command), None) => Ok(Endpoint::Stdio { command }),
            (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {
                Ok(Endpoint::Http { url })
            }
            (None, Some(url)) => Err(bad(format!(
                "`url` {url:?} must start with http:// or https://"
            ))),
        }
    }
}

/// Why a server name cannot prefix tool names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameProblem {
    /// The name is empty.
    #[error("the server needs a `name`")]
    Empty,
    /// The name is longer than `max` bytes.
    #[error("the name is longer than {max} characters")]
    TooLong {
        /// [`MAX_SERVER_NAME_LEN`].
        max: usize,
    },
    /// The name holds a character other than a letter, a digit or `-`.
    #[error("the name may hold only letters, digits and `-` (found {found:?})")]
    BadChar {
        /// The first such character.
        found: char,
    },
}

/// A server name must be usable as a tool-name prefix: `[a-zA-Z0-9-]{1,24}`. `_` is refused
/// because it separates the prefix from the tool's own name.
pub fn validate_server_name(name: &str) -> Result<(), McpError> {
    let problem = if name.is_empty() {
        NameProblem::Empty
    } else if name.len() > MAX_SERVER_NAME_LEN {
        NameProblem::TooLong {
            max: MAX_SERVER_NAME_LEN,
        }
    } else if let Some(found) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
    {
        NameProblem::BadChar { found }
    } else {
        return Ok(());
    };
    Err(McpError::InvalidServerName {
        name: name.to_owned(),
        problem,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_stdio_or_http_never_both_or_neither() {
        let stdio = McpServerConfig::stdio("fs", "npx", &["server"]);
        assert_eq!(stdio.endpoint(), Ok(Endpoint::Stdio { command: "npx" }));
        let http = McpServerConfig::http("web", "http://127.0.0.1:3001/mcp");
        assert!(matches!(http.endpoint(), Ok(Endpoint::Http { .. })));
        let both = McpServerConfig {
            url: Some("http://x".into()),
            ..stdio.clone()
        };
        assert!(
            both.endpoint()
                .unwrap_err()
                .to_string()
                .contains("not both")
        );
        let neither = McpServerConfig {
            name: "x".into(),
            ..McpServerConfig::default()
        };
        assert!(neither.endpoint().is_err());
        let ftp = McpServerConfig::http("x", "ftp://host");
        assert!(ftp.endpoint().unwrap_err().to_string().contains("http://"));
    }

    #[test]
    fn names_must_prefix_tool_names() {
        assert!(validate_server_name("files-2").is_ok());
        assert!(validate_server_name("").is_err());
        assert!(
            validate_server_name("a_b")
                .unwrap_err()
                .to_string()
                .contains("'_'")
        );
        assert_eq!(
            validate_server_name("a b"),
            Err(McpError::InvalidServerName {
                name: "a b".into(),
                problem: NameProblem::BadChar { found: ' ' },
            })
        );
        assert!(validate_server_name(&"a".repeat(MAX_SERVER_NAME_LEN)).is_ok());
        assert!(validate_server_name(&"a".repeat(MAX_SERVER_NAME_LEN + 1)).is_err());
    }

    #[test]
    fn the_toml_form_reads_and_rejects_unknown_keys() {
        let text = "name = \"fs\"\ncommand = \"node\"\nargs = [\"a\"]\n[env]\nK = \"v\"\n";
        let cfg: McpServerConfig = toml::from_str(text).expect("a valid entry");
        assert_eq!(cfg.env["K"], "v");
        assert_eq!(cfg.args, ["a"]);
        let err = toml::from_str::<McpServerConfig>("name = \"a\"\ncmd = \"x\"\n").unwrap_err();
        assert!(err.to_string().contains("cmd"), "{err}");
    }
}
