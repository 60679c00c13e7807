//! Calls from the plugin back into the kernel, typed.

use std::time::{Duration, Instant};

use std::sync::Arc;

use hearth_ipc::ArenaRef;
use hearth_rpc::{
    ArenaAlloc, ArenaBlock, ErrorKind, LogParams, Peer, Priority, Stats, WireContext, methods,
};
use serde_json::{Map, Value, json};

use crate::data_plane::DataPlane;
use crate::error::ToolError;

/// How long a reverse call waits when the call it serves has no deadline.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The kernel, as a plugin calls it. Handed out by the [`Registrar`](crate::Registrar) (calls
/// outside any task) and by a [`CallContext`](crate::CallContext) (calls on behalf of the task the
/// handler serves: they carry its context and never outlive its deadline).
///
/// Each method needs the capability the kernel's gate names in `ipc/PROTOCOL.md`; a call the
/// manifest does not allow fails with [`ErrorKind::Denied`] naming the method and capability.
#[derive(Clone)]
pub struct Host {
    peer: Peer,
    ctx: Option<WireContext>,
    deadline: Option<Instant>,
    data_plane: Option<Arc<DataPlane>>,
}

/// An input the kernel took ([`Host::submit`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Submitted {
    /// Its request id, in its reply and in the payload of each of its deltas.
    pub request_id: String,
    /// The stream tag of its deltas in the event ring's slots.
    pub tag: u64,
}

/// Options of an injected input (SPEC §6.9 `InjectOptions`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InjectOptions {
    /// The input never becomes a memory candidate.
    pub no_memory: bool,
    /// The level it claims; the kernel clamps L4 to L3 for external plugins.
    pub priority: Option<Priority>,
}

impl Host {
    pub(crate) fn new(peer: Peer, data_plane: Option<Arc<DataPlane>>) -> Host {
        Host {
            peer,
            ctx: None,
            deadline: None,
            data_plane,
        }
    }

    pub(crate) fn for_call(&self, ctx: WireContext, deadline: Option<Instant>) -> Host {
        Host {
            peer: self.peer.clone(),
            ctx: Some(ctx),
            deadline,
            data_plane: self.data_plane.clone(),
        }
    }

    /// Calls any kernel method. `params` must be an object (or null); the call context is
    /// added as `ctx` when this handle belongs to a call.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, ToolError> {
        let mut params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ToolError::invalid_arguments(format!(
                    "{method}: params must be an object, not {other}"
                )));
            }
        };
        if let Some(ctx) = &self.ctx {
            let ctx = serde_json::to_value(ctx).expect("a call context serialises");
            params.insert("ctx".to_owned(), ctx);
        }
        let timeout = match self.deadline {
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(ToolError::timed_out(format!(
                        "{method}: the call's deadline has passed"
                    )));
                }
                left.min(DEFAULT_CALL_TIMEOUT)
            }
            None => DEFAULT_CALL_TIMEOUT,
        };
        self.peer
            .call(method, Value::Object(params), timeout)
            .map_err(ToolError::from)
    }

    /// Graph recall (`memory.recall`, capability `memory`): `{entities, relations}`.
    pub fn memory_recall(&self, query: &[&str], depth: u32) -> Result<Value, ToolError> {
        self.call(
            methods::MEMORY_RECALL,
            json!({"query": query, "depth": depth}),
        )
    }

    /// Cold-context entries matching `query` by keyword, with ids, scores and times
    /// (`memory.search`, capability `memory`).
    pub fn memory_search(&self, query: &str, top_k: usize) -> Result<Vec<Value>, ToolError> {
        let result = self.call(
            methods::MEMORY_SEARCH,
            json!({"query": query, "top_k": top_k}),
        )?;
        field(methods::MEMORY_SEARCH, result, "items")
    }

    /// [`memory_search`](Self::memory_search)'s entries, and the turns said so recently they
    /// are still in the agent's working window that hold the query's words (`recent`, each
    /// with its name `w12`, its text and time), as `memory.search` answers (capability
    /// `memory`). A kernel without the recent list answers none.
    pub fn memory_search_with_recent(
        &self,
        query: &str,
        top_k: usize,
    ) -> Result<(Vec<Value>, Vec<Value>), ToolError> {
        let mut result = self.call(
            methods::MEMORY_SEARCH,
            json!({"query": query, "top_k": top_k}),
        )?;
        let recent = match result.get_mut("recent").map(Value::take) {
            Some(Value::Array(recent)) => recent,
            _ => Vec::new(),
        };
        Ok((field(methods::MEMORY_SEARCH, result, "items")?, recent))
    }

    /// Deletes cold-context entry `id` (`memory.forget`, capability `memory`): committed and
    /// recorded in the kernel's audit log with `reason` before it answers; `false` when no
    /// entry had that id.
    pub fn memory_forget(&self, id: i64, reason: &str) -> Result<bool, ToolError> {
        let result = self.call(methods::MEMORY_FORGET, json!({"id": id, "reason": reason}))?;
        field(methods::MEMORY_FORGET, result, "forgotten")
    }

    /// [`memory_forget`](Self::memory_forget) by name: `c45` (a cold-context entry) or `w12`
    /// (a turn still in the working window, as
    /// [`memory_search_with_recent`](Self::memory_search_with_recent) names it). Its whole
    /// turn goes either way.
    pub fn memory_forget_named(&self, name: &str, reason: &str) -> Result<bool, ToolError> {
        let result = self.call(
            methods::MEMORY_FORGET,
            json!({"id": name, "reason": reason}),
        )?;
        field(methods::MEMORY_FORGET, result, "forgotten")
    }

    /// Keeps an event this plugin saw in long-term memory (`textmemory.append`, capability
    /// `text_memory`): `input` said by `source` (this plugin when `None`) at `timestamp_ms`
    /// (now when `None`); committed before it answers with the entry's id, which
    /// [`memory_forget`](Self::memory_forget) takes.
    pub fn text_memory_append(
        &self,
        input: &str,
        source: Option<&str>,
        timestamp_ms: Option<i64>,
    ) -> Result<i64, ToolError> {
        let event = json!({"input": input, "source": source, "timestamp_ms": timestamp_ms});
        let result = self.call(methods::TEXTMEMORY_APPEND, json!({"event": event}))?;
        field(methods::TEXTMEMORY_APPEND, result, "id")
    }

    /// Document search (`doc.query`, capability `doc_memory`): the matching documents.
    pub fn memory_query(&self, text: &str, top_k: usize) -> Result<Vec<Value>, ToolError> {
        let result = self.call(methods::DOC_QUERY, json!({"text": text, "top_k": top_k}))?;
        field(methods::DOC_QUERY, result, "docs")
    }

    /// This plugin's own setting (`settings.get`, core); `Null` when unset.
    pub fn settings_get(&self, key: &str) -> Result<Value, ToolError> {
        let result = self.call(methods::SETTINGS_GET, json!({"key": key}))?;
        Ok(result.get("value").cloned().unwrap_or(Value::Null))
    }

    /// Sets this plugin's own setting (`settings.set`, core).
    pub fn settings_set(&self, key: &str, value: Value) -> Result<(), ToolError> {
        self.call(methods::SETTINGS_SET, json!({"key": key, "value": value}))
            .map(drop)
    }

    /// Injects a text input (`io.injectText`, capability `io`); the reply goes to `channel`.
    pub fn inject_input(
        &self,
        channel: &str,
        text: &str,
        options: &InjectOptions,
    ) -> Result<(), ToolError> {
        self.inject(methods::IO_INJECT_TEXT, channel, text, options)
            .map(drop)
    }

    /// Injects an interrupt (`io.injectInterrupt`, capability `io`).
    pub fn inject_interrupt(
        &self,
        channel: &str,
        text: &str,
        options: &InjectOptions,
    ) -> Result<(), ToolError> {
        self.inject(methods::IO_INJECT_INTERRUPT, channel, text, options)
            .map(drop)
    }

    /// Injects an input and waits for its reply text (`io.injectInputSync`, capability `io`).
    pub fn inject_input_sync(
        &self,
        channel: &str,
        text: &str,
        options: &InjectOptions,
    ) -> Result<String, ToolError> {
        let result = self.inject(methods::IO_INJECT_INPUT_SYNC, channel, text, options)?;
        field(methods::IO_INJECT_INPUT_SYNC, result, "reply")
    }

    /// From inside a tool's handler (through its [`CallContext::host`]): media that join this
    /// call's result when the tool answers (`io.setToolBlocks`), replacing any set before.
    /// `blocks` are content blocks as for [`Host::inject_media`]; the kernel stores them and
    /// shows them to a source that takes images, and the model reads their marker lines.
    ///
    /// [`CallContext::host`]: crate::CallContext::host
    pub fn set_tool_blocks(&self, blocks: Vec<Value>) -> Result<(), ToolError> {
        self.call(methods::IO_SET_TOOL_BLOCKS, json!({"blocks": blocks}))
            .map(drop)
    }

    /// Injects an input that brings media (`io.injectMedia`, capability `io`): `blocks` are
    /// content blocks in the chat form, such as `{"type": "image_url", "image_url": {"url":
    /// "data:image/png;base64,…"}}`; they reach the model with this turn's message and are kept
    /// in the kernel's media store. `text` may be empty.
    pub fn inject_media(
        &self,
        channel: &str,
        text: &str,
        blocks: Vec<Value>,
        options: &InjectOptions,
    ) -> Result<(), ToolError> {
        self.inject_with(methods::IO_INJECT_MEDIA, channel, text, blocks, options)
            .map(drop)
    }

    /// [`Host::inject_media`] as an interrupt (`io.injectInterruptMedia`, capability `io`).
    pub fn inject_interrupt_media(
        &self,
        channel: &str,
        text: &str,
        blocks: Vec<Value>,
        options: &InjectOptions,
    ) -> Result<(), ToolError> {
        let method = methods::IO_INJECT_INTERRUPT_MEDIA;
        self.inject_with(method, channel, text, blocks, options)
            .map(drop)
    }

    /// [`Host::inject_media`], waiting for the reply text (`io.injectMediaSync`, capability
    /// `io`).
    pub fn inject_media_sync(
        &self,
        channel: &str,
        text: &str,
        blocks: Vec<Value>,
        options: &InjectOptions,
    ) -> Result<String, ToolError> {
        let method = methods::IO_INJECT_MEDIA_SYNC;
        let result = self.inject_with(method, channel, text, blocks, options)?;
        field(method, result, "reply")
    }

    /// Submits an input on `channel` and answers at once (`io.submit`, capability `io`): its
    /// request id and the stream tag its deltas carry on the event ring (follow them with
    /// [`EventStream::with_tag`](crate::EventStream::with_tag)); the reply comes from
    /// [`Host::reply`]. An interrupt runs at `options.priority` (L1 when unset).
    pub fn submit(
        &self,
        channel: &str,
        text: &str,
        interrupt: bool,
        options: &InjectOptions,
    ) -> Result<Submitted, ToolError> {
        let mut params = json!({"channel": channel, "text": text, "interrupt": interrupt});
        if let Some(p) = options.priority {
            params["priority"] = serde_json::to_value(p).expect("a priority serialises");
        }
        let result = self.call(methods::IO_SUBMIT, params)?;
        serde_json::from_value(result).map_err(|e| {
            ToolError::new(
                ErrorKind::Failed,
                format!(
                    "{}: the kernel's answer is not {{request_id, tag}}: {e}",
                    methods::IO_SUBMIT
                ),
            )
        })
    }

    /// The reply of an input [`Host::submit`] started, waiting up to `wait` (the kernel waits
    /// 30 s at most per call): `{done: false}` while it runs, else `{done: true, content,
    /// error, skipped, reason}`. The kernel keeps the reply, so asking again (after a restart
    /// of this process) gets it too.
    pub fn reply(&self, request_id: &str, wait: Duration) -> Result<Value, ToolError> {
        let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        self.call(
            methods::IO_REPLY,
            json!({"request_id": request_id, "timeout_ms": ms}),
        )
    }

    /// The stop button for `channel` (`io.stop`, capability `io`): the running answer is cut
    /// and the queued inputs dropped.
    pub fn stop(&self, channel: &str) -> Result<(), ToolError> {
        self.call(methods::IO_STOP, json!({"channel": channel}))
            .map(drop)
    }

    /// The last `limit` journaled inputs of `channel` and their replies, oldest first
    /// (`io.history`, capability `io`).
    pub fn history(&self, channel: &str, limit: usize) -> Result<Vec<Value>, ToolError> {
        let result = self.call(
            methods::IO_HISTORY,
            json!({"channel": channel, "limit": limit}),
        )?;
        field(methods::IO_HISTORY, result, "turns")
    }

    /// An operator's control request (`kernel.control`, capability `plugin_mgr`), shaped as
    /// the client socket takes it: `{"op": "status"}`, `source_list`, `source_add {source}`,
    /// `source_remove {name}`, `source_test {name}`, `plugin {action, name}`.
    pub fn control(&self, request: Value) -> Result<Value, ToolError> {
        self.call(methods::KERNEL_CONTROL, json!({"request": request}))
    }

    /// Subscribes to event types (`events.subscribe`, capability `events`); the events arrive
    /// on the data plane's event ring (see [`Host::data_plane`]).
    pub fn subscribe(&self, types: &[&str]) -> Result<(), ToolError> {
        self.call(methods::EVENTS_SUBSCRIBE, json!({"types": types}))
            .map(drop)
    }

    /// The configured LLM sources (`llm.listSources`, capability `llm`).
    pub fn llm_sources(&self) -> Result<Vec<Value>, ToolError> {
        let result = self.call(methods::LLM_LIST_SOURCES, json!({}))?;
        field(methods::LLM_LIST_SOURCES, result, "sources")
    }

    /// The loaded plugins (`plugin.listLoaded`, capability `plugin_mgr`).
    pub fn list_plugins(&self) -> Result<Vec<Value>, ToolError> {
        let result = self.call(methods::PLUGIN_LIST_LOADED, json!({}))?;
        field(methods::PLUGIN_LIST_LOADED, result, "plugins")
    }

    /// Writes one line to the kernel's log (the `log` notification; never blocks on an answer).
    pub fn log(&self, level: &str, message: &str) {
        let params = LogParams {
            level: level.to_owned(),
            message: message.to_owned(),
        };
        let params = serde_json::to_value(params).expect("log params serialise");
        if self.peer.notify(methods::LOG, params).is_err() {
            // The pipe is gone; stderr still reaches the kernel's log.
            eprintln!("[{level}] {message}");
        }
    }

    /// The data plane the kernel offered in the handshake and the SDK attached (shared segment
    /// on fd 3, doorbell on fd 4; layout in `ipc/DESIGN.md`), or `None` when none was offered
    /// or it was refused (the reason went to stderr). Event-ring readers come from here
    /// ([`DataPlane::events`]).
    pub fn data_plane(&self) -> Option<&DataPlane> {
        self.data_plane.as_deref()
    }

    /// An exchange-arena block of `size` bytes owned by this process (`arena.alloc`), to write
    /// a large result into and hand back by reference.
    pub fn arena_alloc(&self, size: u32) -> Result<ArenaRef, ToolError> {
        let result = self.call(methods::ARENA_ALLOC, json!(ArenaAlloc { size }))?;
        let block: ArenaBlock = serde_json::from_value(result).map_err(|e| {
            ToolError::new(
                ErrorKind::Failed,
                format!(
                    "{}: the kernel's answer is not a block: {e}",
                    methods::ARENA_ALLOC
                ),
            )
        })?;
        Ok(block.block.into())
    }

    /// The control plane's counters (bad frames, unknown responses, busy refusals, …).
    pub fn stats(&self) -> Stats {
        self.peer.stats()
    }
}

impl Host {
    fn inject(
        &self,
        method: &str,
        channel: &str,
        text: &str,
        options: &InjectOptions,
    ) -> Result<Value, ToolError> {
        self.inject_with(method, channel, text, Vec::new(), options)
    }

    fn inject_with(
        &self,
        method: &str,
        channel: &str,
        text: &str,
        blocks: Vec<Value>,
        options: &InjectOptions,
    ) -> Result<Value, ToolError> {
        let mut opts = json!({"no_memory": options.no_memory});
        if let Some(p) = options.priority {
            opts["priority"] = serde_json::to_value(p).expect("a priority serialises");
        }
        let mut params = json!({"channel": channel, "text": text, "options": opts});
        if !blocks.is_empty() {
            params["blocks"] = Value::Array(blocks);
        }
        self.call(method, params)
    }
}

fn field<T: serde::de::DeserializeOwned>(
    method: &str,
    mut result: Value,
    name: &str,
) -> Result<T, ToolError> {
    let value = result.get_mut(name).map(Value::take).unwrap_or(Value::Null);
    serde_json::from_value(value).map_err(|e| {
        ToolError::new(
            ErrorKind::Failed,
            format!("{method}: the kernel's answer has no valid {name:?}: {e}"),
        )
    })
}
