//! `hearth.toml`: every key optional, every default usable. Environment variables override the
//! file (`HEARTH_DATA_DIR`, `HEARTH_SOCKET`, `HEARTH_API_KEY`, `HEARTH_WORKERS`, `HEARTH_LOG`),
//! so a systemd unit or a test can steer the daemon without writing a file.

use hearth_llm::provider::SourceConfig;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Agent settings (SPEC §8.3 `core.agent.*`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// The base system prompt (persona and rules); defaults to the kernel's built-in prompt.
    pub system_prompt: String,
    /// Tool batches per task before it is stopped; 0 = unlimited (default 10).
    pub max_tool_turns: u32,
    /// Messages kept in the working window before older ones go to cold memory (default 30).
    pub max_context_size: usize,
    /// The share of the window's limit a prune frees beyond it, 0 to 1 (default 0.5): the
    /// next turns then only append to the conversation, so a local model's server reuses the
    /// prompt it already read instead of reading the whole conversation again every turn. 0
    /// prunes one event per turn once the window is full, as the original did.
    pub prune_slack: f64,
    /// Seconds east of UTC for timeline stamps; `None` = the system's zone when it can be read.
    pub utc_offset_secs: Option<i64>,
    /// The language of the kernel's texts (errors, stops, placeholders): `auto` picks it per
    /// input from the share of CJK characters, `zh` or `en` fixes it.
    pub language: String,
    /// The LLM source tried first while it is available (by name); empty: by priority. Set
    /// at run time by `hearth settings set core.agent.source NAME` or a plugin's
    /// `llm.setSource`.
    pub source: String,
}

impl AgentConfig {
    /// The `language` setting: `None` for `auto` (decided per input).
    pub fn language(&self) -> Result<Option<hearth_kernel::lang::Lang>, String> {
        hearth_kernel::lang::Lang::parse_setting(&self.language)
            .map_err(|e| format!("agent.language: {e}"))
    }
}

impl Default for AgentConfig {
    fn default() -> Self {
        let turn = hearth_kernel::turn::TurnConfig::default();
        Self {
            system_prompt: turn.system_prompt,
            max_tool_turns: turn.max_tool_turns,
            max_context_size: 30,
            prune_slack: hearth_memory::DEFAULT_PRUNE_SLACK,
            utc_offset_secs: None,
            language: "auto".into(),
            source: String::new(),
        }
    }
}

/// The embedded llama.cpp default source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddedConfig {
    /// Start the embedded server when no source is configured and none answers on loopback.
    pub enabled: bool,
    /// Model threads; 0 = cores − 1 (at least 1).
    pub threads: usize,
    /// Context window of the embedded model, in tokens (default 4096).
    pub ctx: usize,
    /// Where `make setup` put the assets; `None` = the default cache dir.
    pub cache_dir: Option<PathBuf>,
    /// Sampling temperature; `None` = the default of every source (0.7). 0 gives the same
    /// answer to the same prompt.
    pub temperature: Option<f64>,
    /// Offer the model the kernel's tools (default off: the bundled 135M model cannot call
    /// them unprompted, and reading their list made its first answer ~6 s slower on two
    /// cores and about "the tool").
    pub tools: bool,
}

impl Default for EmbeddedConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            threads: 0,
            ctx: 4096,
            cache_dir: None,
            temperature: None,
            tools: false,
        }
    }
}

/// The whole `hearth.toml`, after defaults and environment overrides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where the daemon keeps its stores, socket and plugins (`HEARTH_DATA_DIR`; default
    /// [`default_data_dir`]).
    pub data_dir: PathBuf,
    /// Default `<data_dir>/hearth.sock`.
    pub socket_path: Option<PathBuf>,
    /// When set, a client's first line must be `/auth <key>`.
    pub api_key: Option<String>,
    /// Kernel worker threads (`HEARTH_WORKERS`); `None` = one per core.
    pub workers: Option<usize>,
    /// Probe an OpenAI-compatible server on loopback (Ollama) when no source is configured.
    pub probe_loopback: bool,
    /// Agent settings (`[agent]`).
    pub agent: AgentConfig,
    /// The embedded llama.cpp default source (`[embedded]`).
    pub embedded: EmbeddedConfig,
    /// Load the dense embedding model for recall (off: keyword recall only, ~200 MB less RSS).
    pub memory_model: bool,
    /// Where `make setup` put the embedding model; `None` = the default cache dir.
    pub memory_model_dir: Option<PathBuf>,
    /// Seconds between passes of the graph distiller over new cold context (at least 1).
    pub graph_heartbeat_secs: u64,
    /// Seconds between looks of the model distiller for cold items (0: off, rules only).
    pub graph_model_secs: u64,
    /// How long a cold item must have gone unrecalled before the model distills it, in
    /// seconds (72 hours by default, SPEC §5.2).
    pub graph_model_idle_secs: u64,
    /// Seconds between the model's reviews of look-alike names (SPEC §5.7: 2 hours).
    pub graph_merge_secs: u64,
    /// The half-life of a scene's hold on its facts, in seconds: on the graph heartbeat, the
    /// refs of a scene not entered for this long are halved, and dropped below 0.05 (14 days
    /// by default; 0: they never fade).
    pub graph_scene_half_life_secs: u64,
    /// Days an answered journal entry is kept (the record of each input and its reply; the
    /// conversation itself lives in memory): older ones go, except each channel's newest 100,
    /// the history it shows (0: kept for ever).
    pub journal_keep_days: u64,
    /// The configured LLM sources (`[[sources]]`); names must be unique.
    pub sources: Vec<SourceConfig>,
    /// Limits of the client socket (`[socket]`).
    pub socket: SocketLimits,
    /// MCP servers (`[[mcp]]`); `hearth mcp add` keeps more in `<data_dir>/mcp.toml`.
    pub mcp: Vec<hearth_mcp::McpServerConfig>,
    /// Tools kept from the model (`[tools] disabled = [...]`, `denied = [...]`).
    pub tools: hearth_stages::ToolPolicy,
    /// Plugin settings (`[plugin.files] roots = [...]`): the file's `plugin.<name>.<key>` values.
    pub plugin: std::collections::BTreeMap<String, toml::Table>,
    /// The file as written, so the settings registry can tell a key the file sets from a
    /// default (`hearth settings list --origin`).
    #[serde(skip)]
    pub file: toml::Table,
    /// Install the plugins shipped beside `hearthd` (the web page) when they are missing.
    pub bundled_plugins: bool,
}

/// How long and how many clients the socket serves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SocketLimits {
    /// Open connections at most; one more is told so and closed.
    pub max_connections: usize,
    /// A connection with no request and nothing pending for this long is closed.
    pub idle_timeout_secs: u64,
    /// A client that reads nothing for this long while output waits is closed (its request
    /// cancelled when nothing else waits for it).
    pub write_timeout_secs: u64,
    /// Streamed output buffered per connection before deltas are dropped for a `lag` marker.
    pub write_buffer_bytes: usize,
    /// At shutdown, how long the socket keeps serving so every waiting client gets its
    /// terminal line.
    pub shutdown_grace_ms: u64,
}

impl Default for SocketLimits {
    fn default() -> Self {
        Self {
            max_connections: 256,
            idle_timeout_secs: 600,
            write_timeout_secs: 30,
            write_buffer_bytes: 256 * 1024,
            shutdown_grace_ms: 5_000,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            data_dir: default_data_dir(),
            socket_path: None,
            api_key: None,
            workers: None,
            probe_loopback: true,
            agent: AgentConfig::default(),
            embedded: EmbeddedConfig::default(),
            memory_model: true,
            memory_model_dir: None,
            graph_heartbeat_secs: 600,
            graph_model_secs: 3_600,
            graph_model_idle_secs: 72 * 3_600,
            graph_merge_secs: 7_200,
            graph_scene_half_life_secs: 14 * 86_400,
            journal_keep_days: 30,
            sources: Vec::new(),
            socket: SocketLimits::default(),
            mcp: Vec::new(),
            tools: hearth_stages::ToolPolicy::default(),
            plugin: std::collections::BTreeMap::new(),
            file: toml::Table::new(),
            bundled_plugins: true,
        }
    }
}

/// Why the configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The configuration file exists but could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file that was read.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has a key or value `hearth.toml` does not know.
    #[error("{}: {source}", path.display())]
    Parse {
        /// The file that was parsed.
        path: PathBuf,
        /// The parser's error (it names the line).
        #[source]
        source: toml::de::Error,
    },
    /// The values parse but do not fit together: a bad `agent.language`, an invalid or
    /// twice-defined source, an MCP server without a usable endpoint or defined twice.
    #[error("{0}")]
    Invalid(String),
    /// A source's settings are not valid (the error names the source and the field).
    #[error(transparent)]
    Source(#[from] hearth_llm::provider::SourceConfigError),
}

impl Config {
    /// Loads `path` (a missing file is fine: defaults), then applies the environment.
    pub fn load(path: Option<&Path>) -> Result<Self, ConfigError> {
        let mut cfg = match path {
            Some(path) if path.exists() => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.into(),
                    source,
                })?;
                Self::parse(&text).map_err(|source| ConfigError::Parse {
                    path: path.into(),
                    source,
                })?
            }
            _ => Self::default(),
        };
        cfg.apply_env(|key| std::env::var(key).ok());
        cfg.validate()?;
        Ok(cfg)
    }

    /// Parses the text of a `hearth.toml` (no environment, no validation), keeping the raw table
    /// in [`Config::file`].
    pub fn parse(text: &str) -> Result<Self, toml::de::Error> {
        // Typed first: its errors name the line.
        let mut cfg: Self = toml::from_str(text)?;
        cfg.file = toml::from_str(text)?;
        Ok(cfg)
    }

    /// Overrides from the environment; `get` is injectable so tests need not touch the process env.
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) {
        if let Some(dir) = get("HEARTH_DATA_DIR").filter(|v| !v.is_empty()) {
            self.data_dir = dir.into();
        }
        if let Some(sock) = get("HEARTH_SOCKET").filter(|v| !v.is_empty()) {
            self.socket_path = Some(sock.into());
        }
        if let Some(key) = get("HEARTH_API_KEY") {
            self.api_key = Some(key).filter(|k| !k.is_empty());
        }
        if let Some(n) = get("HEARTH_WORKERS").and_then(|v| v.parse().ok()) {
            self.workers = Some(n);
        }
    }

    /// Checks what parsing cannot: the language setting, each source and MCP server, and that
    /// no name is defined twice.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.agent.language().map_err(ConfigError::Invalid)?;
        if !(0.0..=1.0).contains(&self.agent.prune_slack) {
            return Err(ConfigError::Invalid(format!(
                "agent.prune_slack: {} is not a share of the window (0 to 1)",
                self.agent.prune_slack
            )));
        }
        let mut names = std::collections::HashSet::new();
        for source in &self.sources {
            source.validate()?;
            if !names.insert(source.name.as_str()) {
                return Err(ConfigError::Invalid(format!(
                    "source {:?} is defined twice",
                    source.name
                )));
            }
        }
        let mut servers = std::collections::HashSet::new();
        for server in &self.mcp {
            server
                .endpoint()
                .map_err(|e| ConfigError::Invalid(e.to_string()))?;
            if !servers.insert(server.name.as_str()) {
                return Err(ConfigError::Invalid(format!(
                    "mcp server {:?} is defined twice",
                    server.name
                )));
            }
        }
        Ok(())
    }

    /// The client socket's path: `socket_path` if set, else `<data_dir>/hearth.sock`.
    pub fn socket_path(&self) -> PathBuf {
        self.socket_path
            .clone()
            .unwrap_or_else(|| self.data_dir.join("hearth.sock"))
    }
}

/// `$XDG_DATA_HOME/hearth`, else `~/.local/share/hearth`, else `/var/lib/hearth`.
pub fn default_data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("hearth");
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => PathBuf::from(home).join(".local/share/hearth"),
        None => PathBuf::from("/var/lib/hearth"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_is_all_defaults() {
        let cfg = Config::parse("").expect("parses");
        assert_eq!(cfg.agent.max_tool_turns, 10);
        assert_eq!(cfg.agent.max_context_size, 30);
        assert!(cfg.embedded.enabled && cfg.probe_loopback);
        assert!(cfg.sources.is_empty());
    }

    #[test]
    fn the_scene_half_life_defaults_to_two_weeks_and_zero_turns_it_off() {
        assert_eq!(
            Config::parse("")
                .expect("parses")
                .graph_scene_half_life_secs,
            14 * 86_400
        );
        let cfg = Config::parse("graph_scene_half_life_secs = 3600").expect("parses");
        assert_eq!(cfg.graph_scene_half_life_secs, 3_600);
        let off = Config::parse("graph_scene_half_life_secs = 0").expect("parses");
        assert_eq!(off.graph_scene_half_life_secs, 0);
        assert!(Config::parse("graph_scene_half_life_secs = -1").is_err());
    }

    #[test]
    fn the_journal_keeps_thirty_days_by_default_and_zero_keeps_everything() {
        assert_eq!(Config::parse("").expect("parses").journal_keep_days, 30);
        let cfg = Config::parse("journal_keep_days = 7").expect("parses");
        assert_eq!(cfg.journal_keep_days, 7);
        assert_eq!(
            Config::parse("journal_keep_days = 0")
                .expect("parses")
                .journal_keep_days,
            0
        );
        assert!(Config::parse("journal_keep_days = -1").is_err());
    }

    #[test]
    fn sources_and_agent_keys_parse() {
        let cfg = Config::parse(
            r#"
            data_dir = "/srv/hearth"
            [agent]
            max_tool_turns = 4
            [[sources]]
            name = "deepseek"
            base_url = "https://api.deepseek.example/v1"
            model = "deepseek-chat"
            adapter = "openai"
            priority = 5
            "#,
        )
        .expect("parses");
        assert_eq!(cfg.agent.max_tool_turns, 4);
        assert_eq!(cfg.sources[0].priority, 5);
        assert_eq!(cfg.socket_path(), PathBuf::from("/srv/hearth/hearth.sock"));
        cfg.validate().expect("valid");
    }

    #[test]
    fn unknown_keys_and_bad_sources_are_clear_errors() {
        let err = Config::parse("max_tool_turn = 3")
            .expect_err("typo is an error")
            .to_string();
        assert!(err.contains("max_tool_turn"), "{err}");
        let mut cfg = Config::default();
        cfg.sources.push(SourceConfig {
            name: "x".into(),
            base_url: "ftp://x".into(),
            model: "m".into(),
            adapter: "openai".into(),
            ..SourceConfig::default()
        });
        assert!(
            cfg.validate()
                .expect_err("bad url")
                .to_string()
                .contains("http://")
        );
        cfg.sources[0].base_url = "http://x".into();
        cfg.sources.push(cfg.sources[0].clone());
        assert!(
            cfg.validate()
                .expect_err("dup")
                .to_string()
                .contains("twice")
        );
        cfg.sources.pop();
        cfg.sources[0].model = "null".into();
        assert!(cfg.validate().is_err());
    }

    #[test]
    fn the_language_setting_is_auto_by_default_and_checked() {
        use hearth_kernel::lang::Lang;
        assert_eq!(Config::default().agent.language(), Ok(None));
        let cfg = Config::parse("[agent]\nlanguage = \"zh\"\n").expect("parses");
        assert_eq!(cfg.agent.language(), Ok(Some(Lang::Zh)));
        let cfg = Config::parse("[agent]\nlanguage = \"klingon\"\n").expect("parses");
        let err = cfg.validate().expect_err("unknown language").to_string();
        assert!(
            err.contains("agent.language") && err.contains("klingon"),
            "{err}"
        );
    }

    #[test]
    fn the_prune_slack_is_a_share_of_the_window() {
        assert_eq!(
            Config::default().agent.prune_slack,
            hearth_memory::DEFAULT_PRUNE_SLACK
        );
        let cfg = Config::parse("[agent]\nprune_slack = 0\n").expect("parses");
        assert!(cfg.validate().is_ok());
        for bad in ["1.5", "-0.1", "nan"] {
            let cfg = Config::parse(&format!("[agent]\nprune_slack = {bad}\n")).expect("parses");
            let err = cfg.validate().expect_err(bad).to_string();
            assert!(err.contains("agent.prune_slack"), "{err}");
        }
    }

    #[test]
    fn mcp_servers_and_the_tool_policy_parse_and_bad_entries_are_refused() {
        let cfg = Config::parse(
            r#"
            [tools]
            disabled = ["mcp:web"]
            denied = ["mcp.write"]
            [[mcp]]
            name = "fs"
            command = "npx"
            args = ["-y", "@modelcontextprotocol/server-filesystem", "/home/me"]
            [[mcp]]
            name = "web"
            url = "http://127.0.0.1:3001/mcp"
            "#,
        )
        .expect("parses");
        assert_eq!(cfg.mcp.len(), 2);
        assert_eq!(cfg.mcp[0].args.len(), 3);
        assert!(cfg.tools.denied.contains("mcp.write"));
        cfg.validate().expect("valid");
        let mut dup = cfg.clone();
        dup.mcp.push(dup.mcp[0].clone());
        assert!(dup.validate().unwrap_err().to_string().contains("twice"));
        let both = Config::parse("[[mcp]]\nname = \"x\"\ncommand = \"a\"\nurl = \"http://b\"\n")
            .expect("parses");
        assert!(
            both.validate()
                .unwrap_err()
                .to_string()
                .contains("not both")
        );
    }

    #[test]
    fn plugin_tables_parse_and_the_file_is_kept_as_written() {
        let cfg = Config::parse(
            "probe_loopback = false\n[agent]\nmax_tool_turns = 4\n[plugin.files]\nroots = [\"/srv\"]\n",
        )
        .expect("parses");
        assert_eq!(
            cfg.plugin["files"]["roots"],
            toml::Value::Array(vec!["/srv".into()])
        );
        assert_eq!(cfg.file["agent"]["max_tool_turns"].as_integer(), Some(4));
        assert!(
            cfg.file.get("memory_model").is_none(),
            "only what is written"
        );
        let err = Config::parse("[agent]\nmax_tool_turns = \"x\"\n")
            .expect_err("typed")
            .to_string();
        assert!(err.contains("line 2"), "the line is named: {err}");
    }

    #[test]
    fn environment_overrides_the_file() {
        let mut cfg = Config::default();
        cfg.apply_env(|k| match k {
            "HEARTH_DATA_DIR" => Some("/tmp/h".into()),
            "HEARTH_API_KEY" => Some("s3cret".into()),
            "HEARTH_WORKERS" => Some("3".into()),
            _ => None,
        });
        assert_eq!(cfg.data_dir, PathBuf::from("/tmp/h"));
        assert_eq!(cfg.api_key.as_deref(), Some("s3cret"));
        assert_eq!(cfg.workers, Some(3));
        assert_eq!(cfg.socket_path(), PathBuf::from("/tmp/h/hearth.sock"));
    }
}
