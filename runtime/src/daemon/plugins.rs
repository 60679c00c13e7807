//! The plugin host wired to the kernel: plugin tools, stages and channels go into the kernel's
//! tables; lifecycle events onto the event ring; injected inputs into the ingress; the kernel's
//! event ring lives in the one shared segment every plugin maps.

use std::sync::Arc;

use hearth_ipc::{EventKind, SegmentConfig};
use hearth_kernel::events::EventBus;
use hearth_kernel::ingress::KernelHandle;
use hearth_kernel::input::{InputEvent, Trust};
use hearth_plugin_host::{DataPlane, KernelPort, PluginError};
use std::time::Duration;

use hearth_engine::CancelToken;
use hearth_llm::provider::{ChatRequest, Message, Role};
use hearth_rpc::{ErrorKind, HandlerError, Priority};
use hearth_stages::{CallContext, ToolRegistry};

use super::sources::Sources;
use serde_json::{Value, json};

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
}

impl KernelPlugins {
    fn memory_tool(&self, tool: &str, args: &Value) -> Result<Value, HandlerError> {
        let ctx = CallContext::kernel(MEMORY_TIMEOUT);
        let text = self
            .tools
            .execute(&ctx, tool, args)
            .map_err(|e| HandlerError::new(ErrorKind::Failed, format!("{tool}: {e}")))?;
        Ok(json!({"text": text}))
    }
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
        interrupt: bool,
        priority: Option<Priority>,
    ) -> Result<(), String> {
        let input = InputEvent::text(channel, text)
            .with_trust(Trust::External)
            .with_payload("plugin", json!(plugin));
        // Nobody waits for the reply of an injected input; it goes to the channel's output.
        if interrupt {
            let level = priority.unwrap_or(Priority::L1);
            let input = input
                .with_payload("priority", json!(level))
                .with_payload("interrupt", json!(true));
            drop(self.handle.interrupt(input));
        } else {
            drop(self.handle.submit(input));
        }
        Ok(())
    }

    fn memory_recall(
        &self,
        _plugin: &str,
        query: &str,
        top_k: usize,
    ) -> Result<Value, HandlerError> {
        self.memory_tool(
            "coldcontext_query",
            &json!({"query": query, "top_k": top_k}),
        )
    }

    fn memory_commit(
        &self,
        _plugin: &str,
        content: &str,
        summary: &str,
    ) -> Result<Value, HandlerError> {
        self.memory_tool(
            "doc_commit",
            &json!({"content": content, "summary": summary}),
        )
    }

    fn llm_sources(&self) -> Result<Value, HandlerError> {
        Ok(json!({"sources": self.sources.status()}))
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
        let cancel = CancelToken::new();
        let _deadline = cancel.cancel_after(timeout);
        let mut text = String::new();
        self.sources
            .provider()
            .chat_stream(&request, &cancel, &mut |chunk| {
                text.push_str(&chunk.content)
            })
            .map_err(|e| {
                HandlerError::new(
                    ErrorKind::Failed,
                    format!("llm.complete for plugin {plugin}: {e}"),
                )
            })?;
        Ok(json!({"text": text}))
    }
}
