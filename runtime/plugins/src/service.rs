//! The kernel's side of a plugin's reverse calls: every call passes the capability gate of the
//! plugin's manifest first, then registers into the kernel tables or reaches the kernel port.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use hearth_rpc::{
    ArenaAlloc, ArenaBlock, ErrorKind, Grants, HandlerError, Incoming, InputRegister, LogParams,
    OutputRegister, Peer, Priority, Service, StageRegister, ToolRegister, Trust,
    clamp_inject_params, gate, methods,
};
use hearth_stages::{Caps, HandlerSpec, Scope, Stage, ToolDef};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use hearth_settings::Settings;

use crate::by_tool::by_tool;
use crate::data_plane::DataPlane;
use crate::link::Link;
use crate::port::{Injection, KernelPort};
use crate::tables::Tables;
use crate::tool_proxy::{OutputProxy, StageProxy, ToolProxy};

pub(crate) struct PluginService {
    pub(crate) link: Arc<Link>,
    pub(crate) grants: Grants,
    pub(crate) tables: Tables,
    pub(crate) port: Arc<dyn KernelPort>,
    pub(crate) settings: Option<Arc<Settings>>,
    /// The plugin's own directory (`<data_dir>/plugins/<name>`, its working directory); `None`
    /// for a plugin that runs in the daemon's process.
    pub(crate) home: Option<std::path::PathBuf>,
}

fn decode<T: DeserializeOwned>(method: &str, params: Value) -> Result<T, HandlerError> {
    let params = if params.is_null() { json!({}) } else { params };
    serde_json::from_value(params)
        .map_err(|e| HandlerError::invalid_arguments(format!("{method}: {e}")))
}

fn done() -> Result<Value, HandlerError> {
    Ok(json!({}))
}

/// How an `io.inject*` call's input enters: an interrupt or not, its priority (clamped
/// already), whether it is kept out of memory (`io.injectTextNoMem` or `options.no_memory`),
/// and the media it brings (the `blocks` of the `io.inject*Media*` methods).
pub(crate) fn injection(method: &str, params: &mut Value) -> Result<Injection, HandlerError> {
    let options = &params["options"];
    let mut how = Injection {
        interrupt: method == methods::IO_INJECT_INTERRUPT
            || method == methods::IO_INJECT_INTERRUPT_MEDIA,
        priority: priority(method, &options["priority"])?,
        no_memory: method == methods::IO_INJECT_TEXT_NO_MEM || options["no_memory"] == true,
        media: Vec::new(),
    };
    let brings_media = matches!(
        method,
        methods::IO_INJECT_MEDIA
            | methods::IO_INJECT_MEDIA_SYNC
            | methods::IO_INJECT_INTERRUPT_MEDIA
    );
    if brings_media {
        how.media = media_blocks(method, params)?;
    }
    Ok(how)
}

/// An input's optional `priority` (`"L1"`..`"L4"`): anything else is refused rather than
/// quietly run at the default, so a plugin learns its option was never applied.
pub(crate) fn priority(method: &str, value: &Value) -> Result<Option<Priority>, HandlerError> {
    if value.is_null() {
        return Ok(None);
    }
    Priority::deserialize(value).map(Some).map_err(|_| {
        HandlerError::invalid_arguments(format!("{method}: priority {value} is not L1..L4"))
    })
}

/// The `blocks` of a media injection, moved out of the params (they may hold megabytes of
/// base64): a non-empty list of content-block objects. What each block holds is checked where
/// it is stored, before the input is journaled.
pub(crate) fn media_blocks(method: &str, params: &mut Value) -> Result<Vec<Value>, HandlerError> {
    match params.get_mut("blocks").map(Value::take) {
        Some(Value::Array(blocks)) if !blocks.is_empty() && blocks.iter().all(Value::is_object) => {
            Ok(blocks)
        }
        _ => Err(HandlerError::invalid_arguments(format!(
            "{method}: blocks must be a non-empty list of content blocks, such as \
             {{\"type\": \"image_url\", \"image_url\": {{\"url\": \"data:image/png;base64,…\"}}}}"
        ))),
    }
}

/// The text of an injection: required, but a media injection may leave it out (the media are
/// the message).
pub(crate) fn injected_text<'a>(
    method: &str,
    params: &'a Value,
    how: &Injection,
) -> Result<&'a str, HandlerError> {
    match params["text"].as_str() {
        Some(text) => Ok(text),
        None if !how.media.is_empty() && params["text"].is_null() => Ok(""),
        None => Err(HandlerError::invalid_arguments(format!(
            "{method}: text must be a string"
        ))),
    }
}

/// `events.subscribe` / `events.unsubscribe`: every event is on the shared ring, which the
/// plugin filters as it reads (its `EventStream`), so the kernel only checks the names: a
/// misspelt type would otherwise wait for events that never come.
fn event_types(method: &str, params: &Value) -> Result<Value, HandlerError> {
    let names = params["types"].as_array().ok_or_else(|| {
        HandlerError::invalid_arguments(format!("{method}: types must be a list of event types"))
    })?;
    let mut kinds = Vec::with_capacity(names.len());
    for name in names {
        let kind = name
            .as_str()
            .and_then(hearth_ipc::EventKind::from_name)
            .ok_or_else(|| {
                let known: Vec<&str> = hearth_ipc::EventKind::ALL
                    .iter()
                    .map(|k| k.as_str())
                    .collect();
                HandlerError::invalid_arguments(format!(
                    "{method}: {name} is not an event type (known: {})",
                    known.join(", ")
                ))
            })?;
        kinds.push(kind.as_str());
    }
    Ok(json!({"types": kinds}))
}

impl PluginService {
    fn arena(&self, method: &str) -> Result<(&DataPlane, u32), HandlerError> {
        self.link.arena().ok_or_else(|| {
            HandlerError::new(
                ErrorKind::Unavailable,
                format!("{method}: the kernel offered no data plane to this process"),
            )
        })
    }
}

impl PluginService {
    /// One reverse call of the plugin: the capability gate of its manifest, then the method.
    pub(crate) fn dispatch(&self, method: &str, mut params: Value) -> Result<Value, HandlerError> {
        gate(method, &self.grants)?;
        clamp_inject_params(method, &mut params, Trust::External);
        let plugin = self.link.name.as_str();
        if let Some(row) = by_tool(method) {
            return self.by_tool(row, params);
        }
        match method {
            methods::TOOL_REGISTER => {
                let reg: ToolRegister = decode(method, params)?;
                let mut def: ToolDef = serde_json::from_value(reg.def)
                    .map_err(|e| HandlerError::invalid_arguments(format!("{method}: def: {e}")))?;
                def.name = reg.name;
                def.plugin = plugin.to_owned();
                let proxy = ToolProxy {
                    link: Arc::clone(&self.link),
                    tool: def.name.clone(),
                };
                let name = def.name.clone();
                // A reload's new process replaces the tool its predecessor left registered.
                if self.link.is_reloading()
                    && self
                        .tables
                        .tools
                        .get(&name)
                        .is_some_and(|t| t.def.plugin == plugin)
                {
                    self.tables.tools.unregister(&name);
                }
                self.tables
                    .tools
                    .register(def, proxy)
                    .map_err(|e| HandlerError::invalid_arguments(e.to_string()))?;
                self.link.tools.lock().insert(name);
                done()
            }
            methods::STAGE_REGISTER => {
                let reg: StageRegister = decode(method, params)?;
                let stage = Stage::from_name(&reg.stage).ok_or_else(|| {
                    HandlerError::invalid_arguments(format!(
                        "{method}: no stage named {:?} (stages: {})",
                        reg.stage,
                        Stage::ALL.map(Stage::as_str).join(", ")
                    ))
                })?;
                let spec = HandlerSpec::new(plugin)
                    .priority(reg.priority)
                    .scope(Scope::from_wire(&reg.scope));
                let proxy = StageProxy {
                    link: Arc::clone(&self.link),
                    stage: reg.stage,
                };
                self.tables.stages.register(stage, spec, proxy);
                done()
            }
            methods::OUTPUT_REGISTER => {
                let reg: OutputRegister = decode(method, params)?;
                let mut caps = Caps::default();
                for name in &reg.caps {
                    caps |= Caps::for_send_type(name).ok_or_else(|| {
                        HandlerError::invalid_arguments(format!(
                            "{method}: unknown capability {name:?} (text, image, audio, voice, file)"
                        ))
                    })?;
                }
                let proxy = OutputProxy {
                    link: Arc::clone(&self.link),
                    channel: reg.name.clone(),
                };
                self.tables
                    .outputs
                    .register(&reg.name, caps, &reg.desc, proxy)
                    .map_err(|e| HandlerError::invalid_arguments(e.to_string()))?;
                self.link.channels.lock().push(reg.name);
                done()
            }
            methods::OUTPUT_UNREGISTER => {
                let name = params["name"].as_str().unwrap_or_default().to_owned();
                let mut mine = self.link.channels.lock();
                if !mine.contains(&name) {
                    return Err(HandlerError::invalid_arguments(format!(
                        "{method}: plugin {plugin} has no output channel {name:?}"
                    )));
                }
                mine.retain(|c| *c != name);
                self.tables.outputs.unregister(&name);
                done()
            }
            methods::INPUT_REGISTER => {
                let reg: InputRegister = decode(method, params)?;
                tracing::debug!(plugin, channel = %reg.name, "input channel registered");
                done()
            }
            methods::LIFECYCLE_AUTO_RESTART => {
                let enabled = params["enabled"].as_bool().unwrap_or(true);
                self.link.auto_restart.store(enabled, Ordering::Relaxed);
                done()
            }
            methods::IO_INJECT_TEXT
            | methods::IO_INJECT_INTERRUPT
            | methods::IO_INJECT_TEXT_NO_MEM
            | methods::IO_INJECT_MEDIA
            | methods::IO_INJECT_INTERRUPT_MEDIA => {
                let how = injection(method, &mut params)?;
                let channel = params["channel"].as_str().unwrap_or(plugin);
                let text = injected_text(method, &params, &how)?;
                self.port.inject(plugin, channel, text, how)?;
                done()
            }
            methods::IO_SET_TOOL_BLOCKS => {
                let blocks = media_blocks(method, &mut params)?;
                let call = params["ctx"]["call_id"].as_str().unwrap_or_default();
                if !self.link.tool_blocks.set(call, blocks) {
                    return Err(HandlerError::invalid_arguments(format!(
                        "{method}: {call:?} is not a running tool call of plugin {plugin}; \
                         call it from inside a tool's handler, with the call's ctx"
                    )));
                }
                done()
            }
            methods::IO_INJECT_INPUT_SYNC | methods::IO_INJECT_MEDIA_SYNC => {
                self.inject_sync(method, params)
            }
            methods::IO_SUBMIT
            | methods::IO_REPLY
            | methods::IO_STOP
            | methods::IO_HISTORY
            | methods::KERNEL_CONTROL => self.channel(method, params),
            methods::MEMORY_RECALL | methods::MEMORY_COMMIT => self.memory(method, &params),
            methods::MEMORY_SEARCH => {
                let query = params["query"].as_str().ok_or_else(|| {
                    HandlerError::invalid_arguments(format!("{method}: query must be a string"))
                })?;
                let top_k = params["top_k"].as_u64().unwrap_or(10).clamp(1, 100) as usize;
                self.port.memory_search(query, top_k)
            }
            methods::MEMORY_FORGET => {
                // An entry's number (what `memory.search` and `textmemory.append` give), or
                // its name: `c45`, or `w12` for a turn still in the working window.
                let id = match &params["id"] {
                    Value::Number(n) => n.as_i64().map(|n| format!("c{n}")),
                    Value::String(s) => Some(s.trim().to_owned()),
                    _ => None,
                }
                .ok_or_else(|| {
                    HandlerError::invalid_arguments(format!(
                        "{method}: id must be an entry's number or its name (c45, w12)"
                    ))
                })?;
                let reason = params["reason"].as_str().unwrap_or_default();
                self.port.memory_forget(plugin, method, &id, reason)
            }
            methods::DOC_QUERY => {
                let text = params["text"].as_str().ok_or_else(|| {
                    HandlerError::invalid_arguments(format!("{method}: text must be a string"))
                })?;
                let top_k = params["top_k"].as_u64().unwrap_or(3).clamp(1, 100) as usize;
                let found = self.port.memory_search(text, top_k)?;
                Ok(json!({"docs": found["items"]}))
            }
            methods::DOC_REMOVE => {
                let id = params["id"].as_i64().ok_or_else(|| {
                    HandlerError::invalid_arguments(format!("{method}: id must be an integer"))
                })?;
                let gone = self
                    .port
                    .memory_forget(plugin, method, &format!("c{id}"), method)?;
                Ok(json!({"removed": gone["forgotten"]}))
            }
            methods::DOC_STATS => self.port.doc_stats(),
            methods::TEXTMEMORY_APPEND => {
                let event = crate::text_event::text_event(
                    method,
                    plugin,
                    &params,
                    hearth_engine::now_ms(),
                )?;
                self.port.text_memory_append(plugin, event)
            }
            methods::EVENTS_SUBSCRIBE | methods::EVENTS_UNSUBSCRIBE => event_types(method, &params),
            methods::PLUGIN_LIST_LOADED
            | methods::PLUGIN_IS_DISABLED
            | methods::PLUGIN_RELOAD_ONE => self.plugins(method, &params),
            methods::LLM_LIST_SOURCES
            | methods::LLM_COMPLETE
            | methods::LLM_CURRENT_SOURCE
            | methods::LLM_SET_SOURCE => self.llm(method, &params),
            methods::SETTINGS_DATA_DIR => self.data_dir(),
            m if m.starts_with("settings.") => self.settings(method, &params),
            methods::ARENA_ALLOC => {
                let req: ArenaAlloc = decode(method, params)?;
                let (data, owner) = self.arena(method)?;
                let block = data.alloc(req.size, owner).map_err(|e| {
                    HandlerError::new(
                        ErrorKind::Busy,
                        format!("{method} {{size: {}}}: {e}", req.size),
                    )
                })?;
                Ok(json!(ArenaBlock {
                    block: block.into()
                }))
            }
            methods::ARENA_FREE => {
                let req: ArenaBlock = decode(method, params)?;
                let (data, owner) = self.arena(method)?;
                data.free(&req.block.into(), owner)
                    .map_err(|e| HandlerError::invalid_arguments(format!("{method}: {e}")))?;
                done()
            }
            methods::STAGE_LOCK | methods::STAGE_UNLOCK => {
                let stage = params["stage"].as_str().ok_or_else(|| {
                    HandlerError::invalid_arguments(format!("{method}: stage must be a string"))
                })?;
                let (data, owner) = self.arena(method)?;
                if method == methods::STAGE_UNLOCK {
                    data.locks.unlock(stage, owner, plugin)?;
                } else {
                    let deadline = params["ctx"]["timeout_ms"]
                        .as_u64()
                        .map(|ms| std::time::Instant::now() + std::time::Duration::from_millis(ms));
                    data.locks.lock(stage, owner, plugin, deadline)?;
                }
                done()
            }
            other => Err(HandlerError::new(
                ErrorKind::Unavailable,
                format!("{other} is not served by this daemon yet"),
            )),
        }
    }
}

impl Service for PluginService {
    fn call(&self, req: Incoming) -> Result<Value, HandlerError> {
        self.dispatch(&req.method, req.params)
    }

    fn notify(&self, _peer: &Peer, method: &str, params: Value) {
        if method != methods::LOG {
            return;
        }
        let Ok(log) = serde_json::from_value::<LogParams>(params) else {
            return;
        };
        let plugin = self.link.name.as_str();
        let message = log.message;
        match log.level.as_str() {
            "error" => tracing::error!(plugin, "{message}"),
            "warn" => tracing::warn!(plugin, "{message}"),
            "debug" => tracing::debug!(plugin, "{message}"),
            "trace" => tracing::trace!(plugin, "{message}"),
            _ => tracing::info!(plugin, "{message}"),
        }
    }
}
