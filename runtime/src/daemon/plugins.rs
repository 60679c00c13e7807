//! The plugin host wired to the kernel: plugin tools, stages and channels go into the kernel's
//! tables; lifecycle events onto the event ring; injected inputs into the ingress; the kernel's
//! event ring lives in the one shared segment every plugin maps.

use std::sync::Arc;

use hearth_ipc::{EventKind, SegmentConfig};
use hearth_kernel::events::EventBus;
use hearth_kernel::graph_service::GraphRequest;
use hearth_kernel::ingress::KernelHandle;
use hearth_kernel::input::{InputEvent, Reply, Trust};
use hearth_kernel::memory_service::MemoryService;
use hearth_kernel::memory_tools::MAX_RECALLED_FACTS;
use hearth_plugin_host::{DataPlane, Injection, KernelPort, PluginError, wire_error};
use std::time::Duration;

use hearth_llm::provider::{ChatRequest, Message, Role, complete_text};
use hearth_rpc::{ErrorKind, HandlerError, Priority};
use hearth_stages::{CallContext, ToolRegistry};

use super::channel_replies::{ChannelReplies, reply_json};
use super::settings_service::{SOURCE_KEY, SettingsOp};
use super::sources::Sources;
use crate::socket::{Control, Request, control_answer};
use hearth_kernel::durable::Durable;
use hearth_kernel::events::stream_tag;
use serde_json::{Value, json};
use std::sync::OnceLock;

/// The shared segment, created once at start, and the kernel's event bus publishing into its
/// ring: every event the kernel publishes is readable by plugins without a call.
pub(super) fn shared_events() -> Result<(Arc<DataPlane>, EventBus), PluginError> {
    let plane = DataPlane::create(SegmentConfig::default())?;
    let publisher = plane
        .take_publisher()
        .expect("a fresh segment still holds its publisher");
    let bus = EventBus::new(publisher, plane.subscriber(), "hearth");
    Ok((plane, bus))
}

pub(super) struct KernelPlugins {
    pub(super) handle: KernelHandle,
    pub(super) events: EventBus,
    /// The kernel's tool table: memory reverse calls go through its memory tools, so a
    /// plugin's recall is the model's recall.
    pub(super) tools: Arc<ToolRegistry>,
    pub(super) sources: Arc<Sources>,
    /// The journal: a channel's history is read from it.
    pub(super) durable: Durable,
    /// Replies of inputs plugins submitted with `io.submit`.
    pub(super) replies: ChannelReplies,
    /// Where forgetting a memory is recorded.
    pub(super) audit: super::audit::AuditLog,
    /// The names of the kernel's own tools, taken before any plugin, Lua script, skill or MCP
    /// server could register one: the tools plugin methods such as `knowledge.search` run.
    pub(super) kernel_tools: std::collections::BTreeSet<String>,
    /// Cold context's search by meaning and keywords (`None`: memory is off).
    pub(super) memory: Option<hearth_kernel::memory_service::MemoryService>,
    /// The operator's control (status, sources, plugins), set once the host exists.
    pub(super) control: OnceLock<Arc<dyn Control>>,
}

impl KernelPlugins {
    /// A memory tool's text for `plugin`'s call, as `{text}`.
    fn memory_tool(&self, plugin: &str, tool: &str, args: &Value) -> Result<Value, HandlerError> {
        let text = self.builtin_tool(plugin, tool, args, MEMORY_TIMEOUT)?;
        Ok(json!({"text": text}))
    }

    /// The daemon's control, once the socket has set it up (`what` names the call).
    fn control_ready(&self, what: &str) -> Result<&Arc<dyn Control>, HandlerError> {
        self.control.get().ok_or_else(|| {
            HandlerError::new(
                ErrorKind::Unavailable,
                format!("{what}: the daemon is still starting"),
            )
        })
    }

    /// The memory service, unless this daemon runs without long-term memory (`what` names
    /// the call).
    fn memory_on(&self, what: &str) -> Result<&MemoryService, HandlerError> {
        self.memory.as_ref().ok_or_else(|| {
            HandlerError::new(
                ErrorKind::Unavailable,
                format!("{what}: long-term memory is off in this daemon"),
            )
        })
    }

    /// Runs `op` on the store's owner thread for the reverse call `what`: `Unavailable` when
    /// the store has stopped, `Failed` with the store's error.
    fn on_store<T: Send + 'static, E: std::fmt::Display + Send + 'static>(
        &self,
        what: &str,
        op: impl FnOnce(&mut hearth_memory::Store) -> Result<T, E> + Send + 'static,
    ) -> Result<T, HandlerError> {
        self.durable
            .with_store(op)
            .ok_or_else(|| {
                HandlerError::new(
                    ErrorKind::Unavailable,
                    format!("{what}: the store has stopped"),
                )
            })?
            .map_err(|e| HandlerError::new(ErrorKind::Failed, format!("{what}: {e}")))
    }
}

/// The operator's plugin actions a plugin may ask for; installing or removing code is the
/// local operator's, on the CLI.
const PLUGIN_ACTIONS: [&str; 5] = ["list", "info", "enable", "disable", "reload"];

/// An input a plugin injects or submits: external trust, the plugin named in the payload, an
/// interrupt at its priority (L1 when unset), kept out of memory when it says so, with the
/// media it brings (stored by the journal's owner before the input is journaled).
fn plugin_input(plugin: &str, channel: &str, text: &str, how: Injection) -> InputEvent {
    let mut input = InputEvent::text(channel, text)
        .with_trust(Trust::External)
        .with_payload("plugin", json!(plugin));
    if how.no_memory {
        input = input.with_payload("no_memory", json!(true));
    }
    if !how.media.is_empty() {
        input = input.with_payload("media_blocks", Value::Array(how.media));
    }
    if !how.interrupt {
        return input;
    }
    input
        .with_payload("priority", json!(how.priority.unwrap_or(Priority::L1)))
        .with_payload("interrupt", json!(true))
}

/// How long a plugin's memory call may take.
const MEMORY_TIMEOUT: Duration = Duration::from_secs(30);

impl KernelPort for KernelPlugins {
    fn publish(&self, kind: &str, payload: &Value) {
        let mut event = payload.clone();
        event["type"] = json!(kind);
        self.events.publish(EventKind::System, &event);
    }

    fn inject(
        &self,
        plugin: &str,
        channel: &str,
        text: &str,
        how: Injection,
    ) -> Result<(), HandlerError> {
        let interrupt = how.interrupt;
        let input = plugin_input(plugin, channel, text, how);
        super::plugin_accept::accept(&self.handle, input, interrupt)
    }

    fn memory_recall(
        &self,
        plugin: &str,
        query: &str,
        top_k: usize,
    ) -> Result<Value, HandlerError> {
        self.memory_tool(
            plugin,
            "coldcontext_query",
            &json!({"query": query, "top_k": top_k}),
        )
    }

    fn memory_commit(
        &self,
        plugin: &str,
        content: &str,
        summary: &str,
    ) -> Result<Value, HandlerError> {
        self.memory_tool(
            plugin,
            "doc_commit",
            &json!({"content": content, "summary": summary}),
        )
    }

    fn submit(
        &self,
        plugin: &str,
        channel: &str,
        text: &str,
        how: Injection,
    ) -> Result<Value, HandlerError> {
        let interrupt = how.interrupt;
        let mut input = plugin_input(plugin, channel, text, how);
        let request_id = input.request_id.clone();
        // Kept before the submit, so a reply that comes at once is not lost.
        self.replies.expect(&request_id, input.reply_channel());
        // A refusal (denied, store stopped, media that cannot be stored) has been answered on
        // the reply channel already.
        let _ = self.handle.submit_durably(input, interrupt);
        Ok(json!({"request_id": request_id, "tag": stream_tag(&request_id)}))
    }

    fn reply(&self, request_id: &str, timeout: Duration) -> Result<Value, HandlerError> {
        if let Some(reply) = self.replies.wait(request_id, timeout) {
            return Ok(reply);
        }
        // Not submitted by this daemon instance: the journal knows how it ended, if it did.
        let id = request_id.to_owned();
        let entry = self.on_store("io.reply", move |store| store.journal_get(&id))?;
        let Some(entry) = entry else {
            return Err(HandlerError::invalid_arguments(format!(
                "io.reply: no input {request_id:?} is known"
            )));
        };
        Ok(match entry.reply {
            Some(reply) => reply_json(&Reply {
                request_id: request_id.to_owned(),
                content: reply["content"].as_str().unwrap_or_default().to_owned(),
                skipped: reply["skipped"] == true,
                reason: reply["reason"].as_str().map(str::to_owned),
                error: reply["error"] == true,
                ..Reply::default()
            }),
            // Pending after a restart: the kernel resumes it and the reply reaches the journal.
            None => json!({"done": false}),
        })
    }

    fn stop(&self, plugin: &str, channel: &str) -> Result<Value, HandlerError> {
        tracing::info!(plugin, channel, "stop pressed");
        drop(self.handle.stop(channel));
        Ok(json!({}))
    }

    fn history(&self, channel: &str, limit: usize) -> Result<Value, HandlerError> {
        let source = channel.to_owned();
        // The journal keeps recalled items by id; their texts are read from cold context here,
        // on the store's thread, in the same pass.
        let entries = self.on_store("io.history", move |store| {
            let mut entries = store.journal_recent(&source, limit)?;
            for e in &mut entries {
                if let Some(recalled) = e.reply.as_mut().and_then(|r| r.get_mut("recalled")) {
                    hearth_kernel::recalled::resolve_texts(recalled, |id| store.cold_text(id))?;
                }
            }
            Ok::<_, hearth_memory::StoreError>(entries)
        })?;
        let turns: Vec<Value> = entries
            .into_iter()
            .map(|e| {
                json!({
                    "request_id": e.request_id,
                    "text": e.payload["content"],
                    "reply": e.reply.as_ref().map(|r| r["content"].clone()),
                    "error": e.reply.as_ref().is_some_and(|r| r["error"] == true),
                    "skipped": e.reply.as_ref().and_then(|r| r["reason"].as_str().map(str::to_owned)),
                    "recalled": e.reply.as_ref().map_or(Value::Null, |r| r["recalled"].clone()),
                    "accepted_ms": e.accepted_ms,
                    "replied_ms": e.replied_ms,
                })
            })
            .collect();
        Ok(json!({"turns": turns}))
    }

    fn plugin_action(
        &self,
        plugin: &str,
        action: &str,
        name: Option<&str>,
    ) -> Result<Value, HandlerError> {
        let control = self.control_ready("plugin")?;
        if !PLUGIN_ACTIONS.contains(&action) {
            return Err(HandlerError::new(
                ErrorKind::Denied,
                format!("plugin {action} is not offered to plugins"),
            ));
        }
        tracing::info!(plugin, action, name, "plugin request from a plugin");
        control
            .plugin(action, name)
            .map_err(|e| HandlerError::new(e.kind(), e.to_string()))
    }

    fn control(&self, plugin: &str, request: &Value) -> Result<Value, HandlerError> {
        let control = self.control_ready("kernel.control")?;
        let op = request["request"]["op"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let request: Request = serde_json::from_value(request["request"].clone())
            .map_err(|e| HandlerError::invalid_arguments(format!("kernel.control: {e}")))?;
        match &request {
            Request::Status | Request::SourceList | Request::SourceAdd { .. } => {}
            Request::SourceRemove { .. } | Request::SourceTest { .. } => {}
            Request::Plugin { action, .. } if PLUGIN_ACTIONS.contains(&action.as_str()) => {}
            // Named by its op (and action), never printed whole: a request may carry a secret.
            other => {
                let what = match other {
                    Request::Plugin { action, .. } => format!("plugin {action}"),
                    _ => op,
                };
                return Err(HandlerError::new(
                    ErrorKind::Denied,
                    format!("kernel.control: {what} is not offered to plugins"),
                ));
            }
        }
        tracing::info!(plugin, ?request, "control request from a plugin");
        let answer = control_answer(&**control, request);
        serde_json::to_value(answer)
            .map_err(|e| HandlerError::new(ErrorKind::Failed, format!("kernel.control: {e}")))
    }

    /// Cold context by meaning and keywords, fused (the recall the model gets, without its side
    /// effects), each item with its id, scores and time; keywords only when memory is off.
    fn memory_search(&self, query: &str, top_k: usize) -> Result<Value, HandlerError> {
        if let Some(memory) = &self.memory {
            let items = memory
                .search(query.to_owned(), top_k)
                .map_err(|e| wire_error("memory.search", e.into()))?;
            // Turns said so recently they are still in the working window, named `w12`: what
            // a person looks for to take back something just said.
            let recent: Vec<Value> = memory
                .search_window(query.to_owned(), top_k)
                .map_err(|e| wire_error("memory.search", e.into()))?
                .into_iter()
                .map(|hit| {
                    json!({"id": hearth_kernel::entry_ref::EntryRef::Window(hit.id).to_string(),
                        "text": hit.text, "at_ms": hit.at_ms})
                })
                .collect();
            return Ok(json!({"items": items, "recent": recent}));
        }
        let tokens = hearth_memory::query_tokens(query);
        let items = self.on_store(
            "memory.search",
            move |store| -> Result<Vec<Value>, hearth_memory::StoreError> {
                let mut items = Vec::new();
                for (id, score) in store.cold_fts(&tokens, top_k)? {
                    if let Some(e) = store.cold_get(id)? {
                        items.push(json!({
                            "id": id, "score": score, "keyword": score, "text": e.text,
                            "at_ms": e.event.timestamp_ms,
                        }));
                    }
                }
                Ok(items)
            },
        )?;
        Ok(json!({"items": items}))
    }

    fn graph_recall(&self, query: &str, k: usize) -> Result<Value, HandlerError> {
        let what = "memory.recall";
        self.memory_on(what)?
            .graph(GraphRequest::Recall {
                query: query.to_owned(),
                k: k.clamp(1, MAX_RECALLED_FACTS),
                for_model: false,
            })
            .map_err(|e| wire_error(what, e.into()))
    }

    fn text_memory_append(
        &self,
        plugin: &str,
        event: hearth_plugin_host::TextEvent,
    ) -> Result<Value, HandlerError> {
        let what = "textmemory.append";
        let memory = self.memory_on(what)?;
        let at = event.timestamp_ms.unwrap_or_else(hearth_engine::now_ms);
        let kept = hearth_memory::ContextEvent::new(at, event.source, event.input)
            .with_response(event.response);
        let id = memory
            .remember(kept, format!("plugin:{plugin}"))
            .map_err(|e| wire_error(what, e.into()))?;
        tracing::debug!(plugin, id, "event kept in long-term memory");
        Ok(json!({"id": id}))
    }

    fn memory_forget(
        &self,
        plugin: &str,
        method: &str,
        id: &str,
        reason: &str,
    ) -> Result<Value, HandlerError> {
        use hearth_kernel::entry_ref::EntryRef;
        let entry = EntryRef::parse(id).ok_or_else(|| {
            HandlerError::invalid_arguments(format!(
                "{method}: {id} names no remembered turn (c45, or w12 for a recent one)"
            ))
        })?;
        let answer = match self
            .memory_on(method)?
            .forget_named(entry, &format!("plugin {plugin}"))
        {
            Ok(answer) => answer,
            // Nothing by that name: an answer, not a failure (the page says 404).
            Err(hearth_kernel::MemoryError::NoSuchTurn(_)) => json!({"forgotten": false}),
            Err(e) => return Err(wire_error(method, e.into())),
        };
        // Committed before the audit says so; the audit then survives a crash on its own.
        let forgotten = answer["forgotten"] == true;
        if forgotten {
            // A cold entry keeps its number as `id`, as before; a recent turn is named.
            let id = match entry {
                EntryRef::Cold(n) => json!(n),
                EntryRef::Window(_) => json!(entry.to_string()),
            };
            let record = json!({"at_ms": hearth_engine::now_ms(), "op": "forget", "id": id,
                "by": plugin, "reason": reason, "facts": answer["facts_forgotten"],
                "when_answered": answer["when_answered"] == true});
            self.audit.record(&record).map_err(|e| {
                HandlerError::new(ErrorKind::Failed, format!("{method}: the audit log: {e}"))
            })?;
            self.publish("memory_forgotten", &record);
        }
        Ok(answer)
    }

    fn builtin_tool(
        &self,
        plugin: &str,
        tool: &str,
        args: &Value,
        timeout: Duration,
    ) -> Result<Value, HandlerError> {
        // Only the kernel's own tools: one a plugin registered is that plugin's, not the kernel's.
        if !self.kernel_tools.contains(tool) {
            return Err(HandlerError::new(
                ErrorKind::Unavailable,
                format!("{tool} is not running in this daemon (is its memory off?)"),
            ));
        }
        tracing::debug!(plugin, tool, "kernel tool run for a plugin");
        let ctx = CallContext::kernel(timeout);
        self.tools
            .execute(&ctx, tool, args)
            .map_err(|e| wire_error(tool, e))
    }

    fn doc_stats(&self) -> Result<Value, HandlerError> {
        let entries = self.on_store("doc.stats", |store| store.cold_count())?;
        Ok(json!({"entries": entries}))
    }

    fn llm_sources(&self) -> Result<Value, HandlerError> {
        Ok(json!({"sources": self.sources.status()}))
    }

    fn llm_current_source(&self) -> Result<Value, HandlerError> {
        Ok(json!({"source": self.sources.current()}))
    }

    /// Kept as the `core.agent.source` setting, so it is checked, applied at once and still
    /// chosen after a restart, exactly as `hearth settings set` would.
    fn llm_set_source(&self, plugin: &str, source: &str) -> Result<Value, HandlerError> {
        let control = self.control_ready("llm.setSource")?;
        let op = SettingsOp::Set {
            key: SOURCE_KEY.to_owned(),
            value: Some(json!(source)),
            text: None,
        };
        control
            .settings(op)
            .map_err(|e| HandlerError::new(e.kind(), format!("llm.setSource {source:?}: {e}")))?;
        tracing::info!(plugin, source, "LLM source chosen by a plugin");
        Ok(json!({"source": self.sources.current()}))
    }

    fn llm_complete(
        &self,
        plugin: &str,
        messages: &[(String, String)],
        timeout: Duration,
    ) -> Result<Value, HandlerError> {
        let messages = messages
            .iter()
            .map(|(role, content)| {
                let role = match role.as_str() {
                    "system" => Role::System,
                    "assistant" => Role::Assistant,
                    "user" => Role::User,
                    other => {
                        return Err(HandlerError::invalid_arguments(format!(
                            "llm.complete: role {other:?} is not system, user or assistant"
                        )));
                    }
                };
                Ok(Message::new(role, content.clone()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let request = ChatRequest::new(messages, vec![]);
        let text =
            complete_text(self.sources.provider().as_ref(), &request, timeout).map_err(|e| {
                HandlerError::new(
                    ErrorKind::Failed,
                    format!("llm.complete for plugin {plugin}: {e}"),
                )
            })?;
        Ok(json!({"text": text}))
    }
}

#[cfg(test)]
mod tests {
    /// The plugin host refuses events spoken as the agent by the name memory gives the agent's
    /// turns; were the two to differ, a plugin could pass as the agent.
    #[test]
    fn the_host_reserves_the_name_memory_gives_the_agent() {
        assert_eq!(
            hearth_plugin_host::text_event::AGENT_SOURCE,
            hearth_memory::AGENT_SOURCE
        );
    }
}
