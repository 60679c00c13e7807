//! The daemon's LLM sources: the configured ones, the ones added at run time (kept in
//! `<data_dir>/sources.json`), and the automatic default when there are none — an
//! OpenAI-compatible server already on loopback (Ollama), else the embedded llama.cpp server.

use super::source_error::SourceError;
use crate::config::Config;
use crate::embedded::{EmbeddedAssets, EmbeddedOptions, EmbeddedServer};
use hearth_engine::CancelToken;
use hearth_llm::adapter::{Adapter, bundled};
use hearth_llm::http::{HttpClient, RequestOptions};
use hearth_llm::provider::SourceConfig;
use hearth_llm::provider::{
    ChatProvider, ChatRequest, LuaSource, MediaReader, Message, ProviderManager, SourceInfo,
    Unconfigured, complete_text,
};
use parking_lot::Mutex;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Name under which the built-in "no source" provider is registered.
const NONE_SOURCE: &str = "none";
/// Where Ollama listens by default.
pub const OLLAMA_LOOPBACK: &str = "http://127.0.0.1:11434/v1";
/// Name of the embedded default source.
pub const EMBEDDED_SOURCE: &str = "embedded";
/// Completion limit of the embedded model's answers.
const EMBEDDED_MAX_TOKENS: u32 = 384;

/// The media store's directory, read for the images a request shows a source that takes
/// them (the blobs only, verified against their digest: the store owner keeps the database).
struct MediaDir(PathBuf);

impl MediaReader for MediaDir {
    fn read(&self, digest: &str) -> Option<Vec<u8>> {
        hearth_media::read_blob(&self.0, digest)
            .inspect_err(|e| tracing::warn!("an image for the model: {e}"))
            .ok()
    }
}

/// The daemon's LLM sources: those from `hearth.toml`, those added at run time (kept in
/// `<data_dir>/sources.json`) and the automatic default (Ollama on loopback or the embedded model).
pub struct Sources {
    manager: Arc<ProviderManager>,
    http: HttpClient,
    adapters_dir: PathBuf,
    store: PathBuf,
    /// Sources by name, as configured or added (api keys included; never printed).
    configs: Mutex<BTreeMap<String, SourceConfig>>,
    providers: Mutex<BTreeMap<String, Arc<LuaSource>>>,
    /// Names that came from hearth.toml (not removable at run time).
    from_file: Vec<String>,
    embedded: Mutex<Option<EmbeddedServer>>,
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field("names", &self.configs.lock().keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Sources {
    /// Sets up every source the configuration and the data dir name, or the automatic default.
    pub fn start(cfg: &Config) -> Result<Arc<Self>, String> {
        let adapters_dir = cfg.data_dir.join("adapters");
        bundled::install(&adapters_dir).map_err(|e| {
            format!(
                "installing the bundled adapters into {}: {e}",
                adapters_dir.display()
            )
        })?;
        let sources = Arc::new(Self {
            manager: Arc::new(
                ProviderManager::new(Default::default())
                    .with_media(Arc::new(MediaDir(cfg.data_dir.join("media")))),
            ),
            http: HttpClient::new(),
            adapters_dir,
            store: cfg.data_dir.join("sources.json"),
            configs: Mutex::new(BTreeMap::new()),
            providers: Mutex::new(BTreeMap::new()),
            from_file: cfg.sources.iter().map(|s| s.name.clone()).collect(),
            embedded: Mutex::new(None),
        });
        let mut all = cfg.sources.clone();
        all.extend(load_store(&sources.store)?);
        for source in all {
            if let Err(e) = sources.register(source.clone(), None) {
                tracing::error!(source = %source.name, "source not usable: {e}");
            }
        }
        if sources.configs.lock().is_empty() {
            sources.start_default(cfg);
        }
        Ok(sources)
    }

    /// Ollama on loopback if it answers, else the embedded server, else a provider whose every
    /// answer says how to add a source.
    fn start_default(&self, cfg: &Config) {
        if cfg.probe_loopback
            && let Some(model) = probe_openai(&self.http, OLLAMA_LOOPBACK)
        {
            tracing::info!(%model, "using the OpenAI-compatible server on {OLLAMA_LOOPBACK}");
            let source = SourceConfig {
                name: "ollama".into(),
                base_url: OLLAMA_LOOPBACK.into(),
                model,
                adapter: "openai".into(),
                ..SourceConfig::default()
            };
            if self.register(source, None).is_ok() {
                return;
            }
        }
        if cfg.embedded.enabled {
            match self.start_embedded(cfg) {
                Ok(()) => return,
                Err(e) => tracing::warn!("embedded LLM unavailable: {e}"),
            }
        }
        tracing::warn!("no LLM source: every turn will answer how to add one");
        self.manager
            .register(SourceInfo::new(NONE_SOURCE, ""), Arc::new(Unconfigured));
    }

    fn start_embedded(&self, cfg: &Config) -> Result<(), SourceError> {
        let assets = EmbeddedAssets::locate(cfg.embedded.cache_dir.clone())
            .map_err(|e| SourceError::Embedded(e.to_string()))?;
        let mut opts = EmbeddedOptions {
            ctx: u32::try_from(cfg.embedded.ctx).unwrap_or(u32::MAX),
            ..EmbeddedOptions::default()
        };
        if cfg.embedded.threads > 0 {
            opts.threads = cfg.embedded.threads;
        }
        let alias = opts.alias.clone();
        let ctx = opts.ctx;
        let server = EmbeddedServer::start(assets, opts)
            .map_err(|e| SourceError::Embedded(e.to_string()))?;
        let url = server.base_url_source();
        tracing::info!(base_url = %server.base_url(), "embedded LLM started");
        let source = SourceConfig {
            name: EMBEDDED_SOURCE.into(),
            base_url: server.base_url(),
            model: alias,
            adapter: "openai".into(),
            context_window: ctx as usize,
            // A 135M model rambles: keep its answers short enough to stream in seconds.
            max_tokens: EMBEDDED_MAX_TOKENS,
            temperature: cfg.embedded.temperature,
            no_tools: !cfg.embedded.tools,
            ..SourceConfig::default()
        };
        self.register(source, Some(Arc::new(move || url.get())))?;
        *self.embedded.lock() = Some(server);
        Ok(())
    }

    fn register(
        &self,
        source: SourceConfig,
        base_url: Option<hearth_llm::provider::BaseUrl>,
    ) -> Result<(), SourceError> {
        source.validate()?;
        let adapter = self.load_adapter(&source.adapter)?;
        let provider = Arc::new(match base_url {
            Some(url) => LuaSource::with_base_url(source.clone(), adapter, self.http.clone(), url),
            None => LuaSource::new(source.clone(), adapter, self.http.clone()),
        });
        let info = SourceInfo::new(source.name.clone(), source.model.clone())
            .with_priority(source.priority)
            .with_context_window(source.context_window)
            .with_vision(source.vision);
        // A real source replaces the "no source" stand-in.
        self.manager.remove(NONE_SOURCE);
        self.manager.remove(&source.name);
        self.manager.register(info, provider.clone());
        self.providers.lock().insert(source.name.clone(), provider);
        self.configs.lock().insert(source.name.clone(), source);
        Ok(())
    }

    fn load_adapter(&self, name: &str) -> Result<Arc<Adapter>, SourceError> {
        let adapter = |message: String| SourceError::Adapter {
            adapter: name.to_owned(),
            message,
        };
        let file =
            safe_file_name(name).ok_or_else(|| adapter("not a plain file name".to_owned()))?;
        let path = self.adapters_dir.join(format!("{file}.lua"));
        let source = std::fs::read_to_string(&path)
            .map_err(|e| adapter(format!("{}: {e}", path.display())))?;
        Adapter::load(&format!("{file}.lua"), &source)
            .map(Arc::new)
            .map_err(|e| adapter(e.to_string()))
    }

    /// The manager the kernel calls; it falls back across sources.
    pub fn provider(&self) -> Arc<dyn ChatProvider> {
        self.manager.clone()
    }

    /// The embedded model server as its supervisor sees it (running, restarting, or given up
    /// after too many crashes); `null` when it was not started.
    pub fn embedded_status(&self) -> Value {
        self.embedded
            .lock()
            .as_ref()
            .and_then(EmbeddedServer::status)
            .map_or(Value::Null, |s| serde_json::to_value(s).unwrap_or_default())
    }

    /// Tries source `name` first while it is available (`""`: by priority again); refuses
    /// a name no source has.
    pub fn prefer(&self, name: &str) -> Result<(), SourceError> {
        let name = Some(name.trim()).filter(|n| !n.is_empty());
        self.manager
            .prefer(name)
            .map_err(|e| SourceError::Invalid(e.to_string()))?;
        tracing::info!(
            source = name.unwrap_or("(by priority)"),
            "LLM source preference set"
        );
        Ok(())
    }

    /// Whether `name` could be preferred: blank (by priority) or a registered source's name.
    pub fn check_preference(&self, name: &str) -> Result<(), SourceError> {
        let name = name.trim();
        if name.is_empty() {
            return Ok(());
        }
        self.manager
            .check(name)
            .map_err(|e| SourceError::Invalid(e.to_string()))
    }

    /// The source the next request tries first.
    pub fn current(&self) -> Option<String> {
        self.manager.current()
    }

    /// Sources with their availability (keys never shown).
    pub fn status(&self) -> Value {
        let current = self.current();
        let configs = self.configs.lock();
        let list: Vec<Value> = self
            .manager
            .sources()
            .into_iter()
            .map(|s| {
                let mut v = serde_json::to_value(&s).unwrap_or_default();
                v["current"] = json!(current.as_deref() == Some(s.name.as_str()));
                if let Some(cfg) = configs.get(&s.name) {
                    v["base_url"] = json!(cfg.base_url);
                    v["adapter"] = json!(cfg.adapter);
                    v["has_api_key"] = json!(!cfg.api_key.is_empty());
                }
                v
            })
            .collect();
        json!(list)
    }

    /// Registers a source and saves it to `sources.json` (`hearth source add`); errors when it
    /// is invalid, its adapter is missing or saving fails.
    pub fn add(&self, source: SourceConfig) -> Result<String, SourceError> {
        let name = source.name.clone();
        self.register(source, None)?;
        self.save()?;
        Ok(format!("source {name} added"))
    }

    /// Removes a source added at run time and saves `sources.json`; refuses sources from
    /// `hearth.toml`, the embedded one, and unknown names.
    pub fn remove(&self, name: &str) -> Result<String, SourceError> {
        if self.from_file.iter().any(|n| n == name) {
            return Err(SourceError::NotRemovable(format!(
                "source {name} comes from hearth.toml: remove it there"
            )));
        }
        if name == EMBEDDED_SOURCE {
            return Err(SourceError::NotRemovable(
                "the embedded source is automatic: disable it with [embedded] enabled = false"
                    .into(),
            ));
        }
        if self.configs.lock().remove(name).is_none() {
            return Err(SourceError::Unknown(name.to_owned()));
        }
        self.providers.lock().remove(name);
        self.manager.remove(name);
        self.save()?;
        Ok(format!("source {name} removed"))
    }

    /// Sends a short prompt through one source (no fallback) and reports what came back.
    pub fn test(&self, name: &str) -> Result<String, SourceError> {
        let provider = self
            .providers
            .lock()
            .get(name)
            .cloned()
            .ok_or_else(|| SourceError::Unknown(name.to_owned()))?;
        let request = ChatRequest::new(
            vec![Message::user("Reply with the single word: ready")],
            vec![],
        );
        let started = std::time::Instant::now();
        let result = complete_text(provider.as_ref(), &request, Duration::from_secs(60));
        match result {
            Ok(text) => Ok(format!(
                "source {name} answered in {:.1}s: {}",
                started.elapsed().as_secs_f64(),
                text.trim()
            )),
            Err(e) => Err(SourceError::Failed {
                name: name.to_owned(),
                message: e.to_string(),
            }),
        }
    }

    fn save(&self) -> Result<(), SourceError> {
        let added: Vec<SourceConfig> = self
            .configs
            .lock()
            .values()
            .filter(|s| !self.from_file.contains(&s.name) && s.name != EMBEDDED_SOURCE)
            .cloned()
            .collect();
        let text = serde_json::to_string_pretty(&added)
            .map_err(|e| SourceError::Invalid(format!("sources do not serialise: {e}")))?;
        write_private(&self.store, &text).map_err(|source| SourceError::Save {
            path: self.store.clone(),
            source,
        })
    }

    /// Stops the embedded server, if any.
    pub fn shutdown(&self) {
        if let Some(mut server) = self.embedded.lock().take() {
            server.stop();
        }
    }
}

/// The first model an OpenAI-compatible server lists, if it answers quickly.
fn probe_openai(http: &HttpClient, base_url: &str) -> Option<String> {
    let cancel = CancelToken::new();
    let _deadline = cancel.cancel_after(Duration::from_millis(800));
    let response = http
        .get(
            &format!("{base_url}/models"),
            &[],
            &cancel,
            RequestOptions::non_streaming(),
        )
        .ok()?;
    if !response.is_success() {
        return None;
    }
    let body: Value = serde_json::from_str(&response.read_text(1 << 20).ok()?).ok()?;
    body["data"][0]["id"].as_str().map(str::to_string)
}

fn load_store(path: &Path) -> Result<Vec<SourceConfig>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| format!("{}: {e} (fix or delete the file)", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Writes `text` to `path` atomically with mode 0600 (the file holds API keys).
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("json.tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    // A leftover temporary file keeps its old mode through `open`: set it.
    file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

fn safe_file_name(name: &str) -> Option<&str> {
    (!name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    .then_some(name)
}
