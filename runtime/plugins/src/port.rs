//! What the host needs of the kernel beyond the stage tables: publishing lifecycle events,
//! injecting a plugin's inputs, and serving the memory and LLM reverse calls. The daemon
//! implements it over its kernel handle; every method a kernel does not serve answers
//! `unavailable` by default.

use std::time::Duration;

use hearth_rpc::{ErrorKind, HandlerError, Priority};
use serde_json::Value;

fn not_served(what: &str) -> HandlerError {
    HandlerError::new(
        ErrorKind::Unavailable,
        format!("{what} is not served by this kernel"),
    )
}

/// How a plugin's input enters the kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Injection {
    /// An interrupt (it preempts the running task by its priority) rather than a plain input.
    pub interrupt: bool,
    /// The interrupt's priority, already clamped to L3 for external plugins (L1 when unset).
    pub priority: Option<Priority>,
    /// The turn is kept out of long-term memory (`io.injectTextNoMem`, `options.no_memory`).
    pub no_memory: bool,
    /// Media the input brings (`io.injectMedia*`, `io.submit`'s `blocks`): content blocks in
    /// the chat form, `{"type": "image_url", "image_url": {"url": "data:image/png;base64,…"}}`,
    /// stored in the media store before the input is journaled.
    pub media: Vec<Value>,
}

/// A stages-crate handler error as the wire's typed error: the kind kept, the sentence too.
pub fn wire_error(what: &str, e: hearth_stages::HandlerError) -> HandlerError {
    use hearth_stages::HandlerError as H;
    let kind = match &e {
        H::InvalidArguments(_) => ErrorKind::InvalidArguments,
        H::Denied(_) => ErrorKind::Denied,
        H::TimedOut => ErrorKind::TimedOut,
        H::Cancelled => ErrorKind::Cancelled,
        H::Unavailable(_) => ErrorKind::Unavailable,
        // Failed, and any kind a later stages crate adds.
        _ => ErrorKind::Failed,
    };
    HandlerError::new(kind, format!("{what}: {e}"))
}

/// The kernel as the plugin host sees it.
pub trait KernelPort: Send + Sync + 'static {
    /// Publishes event `kind` (`plugin_crashed`, …) with `payload`.
    fn publish(&self, kind: &str, payload: &Value);

    /// Injects `text` from `plugin` on `channel`, as `how` says. `Ok` once the input is
    /// journaled and queued; an input refused on the way (its media cannot be stored, its
    /// trust does not allow it, the queue is full) is the call's error.
    fn inject(
        &self,
        plugin: &str,
        channel: &str,
        text: &str,
        how: Injection,
    ) -> Result<(), HandlerError>;

    /// `memory.recall`: long-term memory matching `query` for `plugin`, at most `top_k` items →
    /// `{text}` (the memories as the kernel renders them for a prompt; the host adds the
    /// graph's facts from [`KernelPort::graph_recall`]).
    fn memory_recall(
        &self,
        plugin: &str,
        query: &str,
        top_k: usize,
    ) -> Result<Value, HandlerError> {
        let _ = (plugin, query, top_k);
        Err(not_served("memory.recall"))
    }

    /// The knowledge graph's facts for `query`, at most `k` (the kernel may bound it further),
    /// current and past, each as the
    /// graph shows it (`{id, subject, predicate, object, status, sentence, …}`); a look that
    /// changes nothing (the facts are not marked as shown to the model) → a list.
    fn graph_recall(&self, query: &str, k: usize) -> Result<Value, HandlerError> {
        let _ = (query, k);
        Err(not_served("the knowledge graph"))
    }

    /// `memory.commit`: stores `content` (with an optional one-line `summary`) in long-term
    /// memory on behalf of `plugin` → `{stored}`.
    fn memory_commit(
        &self,
        plugin: &str,
        content: &str,
        summary: &str,
    ) -> Result<Value, HandlerError> {
        let _ = (plugin, content, summary);
        Err(not_served("memory.commit"))
    }

    /// `io.submit`: submits `text` from `plugin` on `channel` and answers at once with
    /// `{request_id, tag}` (the stream tag its deltas carry on the event ring); the reply is
    /// kept for [`KernelPort::reply`], so a plugin restarted mid-answer still gets it.
    fn submit(
        &self,
        plugin: &str,
        channel: &str,
        text: &str,
        how: Injection,
    ) -> Result<Value, HandlerError> {
        let _ = (plugin, channel, text, how);
        Err(not_served("io.submit"))
    }

    /// `io.reply`: the reply of `request_id`, waiting up to `timeout` → `{done: false}` or
    /// `{done: true, content, error, skipped, reason}`.
    fn reply(&self, request_id: &str, timeout: Duration) -> Result<Value, HandlerError> {
        let _ = (request_id, timeout);
        Err(not_served("io.reply"))
    }

    /// `io.stop`: the stop button for `plugin`'s `channel` → `{}`.
    fn stop(&self, plugin: &str, channel: &str) -> Result<Value, HandlerError> {
        let _ = (plugin, channel);
        Err(not_served("io.stop"))
    }

    /// `io.history`: the last `limit` journaled inputs of `channel` with their replies, oldest
    /// first → `{turns: [{request_id, text, reply, error, accepted_ms, replied_ms}]}`.
    fn history(&self, channel: &str, limit: usize) -> Result<Value, HandlerError> {
        let _ = (channel, limit);
        Err(not_served("io.history"))
    }

    /// `kernel.control`: an operator's request as the client socket takes it (`{op: "status"}`,
    /// `source_list`, `source_add {source}`, `source_remove {name}`, `source_test {name}`,
    /// `plugin {action, name?}`) → its answer object.
    fn control(&self, plugin: &str, request: &Value) -> Result<Value, HandlerError> {
        let _ = (plugin, request);
        Err(not_served("kernel.control"))
    }

    /// `plugin.listLoaded|isDisabled|reloadOne` for `plugin`: the operator's plugin `action`
    /// (`list`, `info`, `reload`) on `name` → the host's answer (`list`: `{plugins}`; `info`:
    /// the plugin's row; `reload`: `{ok}`). A name no plugin has is invalid arguments; a
    /// reload that fails is a failure, with the host's reason.
    fn plugin_action(
        &self,
        plugin: &str,
        action: &str,
        name: Option<&str>,
    ) -> Result<Value, HandlerError> {
        let _ = (plugin, action, name);
        Err(not_served("plugin.*"))
    }

    /// `memory.search`: cold-context entries matching `query` by keyword, best first, at most
    /// `top_k` → `{items: [{id, score, text, source, created_ms, last_access_ms,
    /// access_count}]}`.
    fn memory_search(&self, query: &str, top_k: usize) -> Result<Value, HandlerError> {
        let _ = (query, top_k);
        Err(not_served("memory.search"))
    }

    /// `memory.forget` and `doc.remove` (`method`, which names the call in errors): deletes
    /// the remembered turn `id` names — a cold-context entry (`c45`) or a turn still in the
    /// working window (`w12`) — for `plugin` (committed before the answer, and recorded in the
    /// audit log with `reason`) → `{forgotten: bool}`.
    fn memory_forget(
        &self,
        plugin: &str,
        method: &str,
        id: &str,
        reason: &str,
    ) -> Result<Value, HandlerError> {
        let _ = (plugin, id, reason);
        Err(not_served(method))
    }

    /// `textmemory.append`: keeps `event` from `plugin` in long-term memory, committed before
    /// the answer → `{id}` (the cold-context entry, for `memory.forget`).
    fn text_memory_append(
        &self,
        plugin: &str,
        event: crate::TextEvent,
    ) -> Result<Value, HandlerError> {
        let _ = (plugin, event);
        Err(not_served("textmemory.append"))
    }

    /// One of the kernel's own tools run for `plugin`'s reverse call, within `timeout` → the
    /// tool's result. The methods the kernel serves with its tools (`knowledge.*`, `social.*`,
    /// `memory.introspect|merge|purge`, `doc.insert*`) go through here, so a plugin's call
    /// obeys the rules the model's does.
    fn builtin_tool(
        &self,
        plugin: &str,
        tool: &str,
        args: &Value,
        timeout: Duration,
    ) -> Result<Value, HandlerError> {
        let _ = (plugin, args, timeout);
        Err(not_served(tool))
    }

    /// `doc.stats`: how much long-term memory holds → `{entries}`.
    fn doc_stats(&self) -> Result<Value, HandlerError> {
        Err(not_served("doc.stats"))
    }

    /// `llm.listSources`: the configured LLM sources, without secrets → `{sources}`.
    fn llm_sources(&self) -> Result<Value, HandlerError> {
        Err(not_served("llm.listSources"))
    }

    /// `llm.currentSource`: the LLM source the next request tries first → `{source}`.
    fn llm_current_source(&self) -> Result<Value, HandlerError> {
        Err(not_served("llm.currentSource"))
    }

    /// `llm.setSource`: `plugin` asks that `source` be tried first while it is available
    /// (`""`: by priority again), kept across restarts → `{source}`.
    fn llm_set_source(&self, plugin: &str, source: &str) -> Result<Value, HandlerError> {
        let _ = (plugin, source);
        Err(not_served("llm.setSource"))
    }

    /// `llm.complete`: one completion of `messages` (`[{role, content}]`) through the kernel's
    /// sources (with their fallback), within `timeout` → `{text}`.
    fn llm_complete(
        &self,
        plugin: &str,
        messages: &[(String, String)],
        timeout: Duration,
    ) -> Result<Value, HandlerError> {
        let _ = (plugin, messages, timeout);
        Err(not_served("llm.complete"))
    }
}

/// No kernel behind the host: events go to the log, injection is refused.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoKernel;

impl KernelPort for NoKernel {
    fn publish(&self, kind: &str, payload: &Value) {
        tracing::info!(event = kind, %payload, "plugin event");
    }

    fn inject(
        &self,
        plugin: &str,
        _channel: &str,
        _text: &str,
        _how: Injection,
    ) -> Result<(), HandlerError> {
        Err(HandlerError::new(
            ErrorKind::Unavailable,
            format!("plugin {plugin}: no kernel accepts injected inputs here"),
        ))
    }
}
