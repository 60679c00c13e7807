//! Output channels and the `output_send__*` tools the model reaches them through.

use std::fmt::{self, Write as _};
use std::sync::Arc;

use parking_lot::RwLock;
use serde_json::{Map, Value, json};

use crate::channel_name::{
    LIST_CHANNELS_TOOL, OUTPUT_HELP_SUFFIX, OUTPUT_SEND_PREFIX, help_tool_name, send_tool_name,
    validate_channel_name,
};
use crate::{
    CallContext, Caps, HandlerError, Stage, StageContext, StagePipeline, StagesError, ToolDef,
};

/// The code that delivers through a channel (a device, a chat bridge, a plugin's output).
pub trait OutputHandler: Send + Sync + 'static {
    /// Deliver `payload` as `kind` (`text`, `voice`, `image`, `file`) with optional routing `meta`,
    /// for `call` (the task and caller the delivery is made for, its stop and deadline).
    ///
    /// A result object whose `status` is `"unconfirmed"` or `"queued"` (with an optional `note`)
    /// tells the model the delivery is not confirmed; anything else `Ok` counts as delivered.
    fn send(
        &self,
        call: &CallContext,
        payload: &str,
        kind: &str,
        meta: Option<&Value>,
    ) -> Result<Value, HandlerError>;
}

impl<F> OutputHandler for F
where
    F: Fn(&CallContext, &str, &str, Option<&Value>) -> Result<Value, HandlerError>
        + Send
        + Sync
        + 'static,
{
    fn send(
        &self,
        call: &CallContext,
        payload: &str,
        kind: &str,
        meta: Option<&Value>,
    ) -> Result<Value, HandlerError> {
        self(call, payload, kind, meta)
    }
}

/// An output handler from a closure that needs no call context and fails with a message.
pub fn output_fn<F>(f: F) -> impl OutputHandler
where
    F: Fn(&str, &str, Option<&Value>) -> Result<Value, String> + Send + Sync + 'static,
{
    move |_: &CallContext, payload: &str, kind: &str, meta: Option<&Value>| {
        f(payload, kind, meta).map_err(HandlerError::Failed)
    }
}

/// A channel as listed to callers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelInfo {
    /// The channel name (`output_send__<name>`).
    pub name: String,
    /// What it can send.
    pub caps: Caps,
    /// What it is, for the model.
    pub description: String,
}

struct Channel {
    info: ChannelInfo,
    handler: Arc<dyn OutputHandler>,
}

/// The send types the tools accept (`audio` is accepted as a synonym of `voice`).
const SEND_TYPES: [&str; 4] = ["text", "voice", "image", "file"];

/// The registered output channels, in registration order. Safe to share between threads.
///
/// Channels are few, so a list with linear lookup is simpler and as fast as a map.
#[derive(Default)]
pub struct OutputChannels {
    channels: RwLock<Vec<Channel>>,
}

impl fmt::Debug for OutputChannels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.channels()).finish()
    }
}

impl OutputChannels {
    /// No channels.
    pub fn new() -> OutputChannels {
        OutputChannels::default()
    }

    /// Add a channel, or replace the one of the same name (a reloaded plugin registers again).
    ///
    /// The name must pass [`validate_channel_name`](crate::validate_channel_name) and `caps` must
    /// hold at least one known capability.
    pub fn register(
        &self,
        name: &str,
        caps: Caps,
        description: &str,
        handler: impl OutputHandler,
    ) -> Result<(), StagesError> {
        validate_channel_name(name)?;
        if caps.is_empty() {
            return Err(StagesError::NoCapabilities {
                name: name.to_owned(),
            });
        }
        let channel = Channel {
            info: ChannelInfo {
                name: name.to_owned(),
                caps,
                description: description.to_owned(),
            },
            handler: Arc::new(handler),
        };
        let mut channels = self.channels.write();
        match channels.iter_mut().find(|c| c.info.name == name) {
            Some(slot) => *slot = channel,
            None => channels.push(channel),
        }
        Ok(())
    }

    /// Remove a channel (dynamic channels such as devices come and go); false when absent.
    pub fn unregister(&self, name: &str) -> bool {
        let mut channels = self.channels.write();
        let before = channels.len();
        channels.retain(|c| c.info.name != name);
        channels.len() != before
    }

    /// Every channel, in registration order.
    pub fn channels(&self) -> Vec<ChannelInfo> {
        self.channels
            .read()
            .iter()
            .map(|c| c.info.clone())
            .collect()
    }

    /// The capabilities of channel `name`.
    pub fn caps_of(&self, name: &str) -> Option<Caps> {
        self.find(name).map(|(info, _)| info.caps)
    }

    /// How many channels there are.
    pub fn len(&self) -> usize {
        self.channels.read().len()
    }

    /// Whether there is no channel.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn find(&self, name: &str) -> Option<(ChannelInfo, Arc<dyn OutputHandler>)> {
        self.channels
            .read()
            .iter()
            .find(|c| c.info.name == name)
            .map(|c| (c.info.clone(), Arc::clone(&c.handler)))
    }

    /// The tools offered to the model: per channel `output_send__<name>` and
    /// `output_send__<name>_help`, then `output_list_channels` when at least one channel exists.
    pub fn tool_defs(&self) -> Vec<ToolDef> {
        let channels = self.channels.read();
        let mut defs = Vec::with_capacity(channels.len() * 2 + 1);
        for c in channels.iter() {
            let name = &c.info.name;
            defs.push(ToolDef {
                name: send_tool_name(name),
                plugin: "output".into(),
                description: format!(
                    "Send a message through the {name} channel ({}). Supports: {}. \
                     Plain replies do not reach this channel; call {} for the meta conventions.",
                    c.info.description,
                    c.info.caps.names().join(", "),
                    help_tool_name(name),
                ),
                parameters: send_parameters(),
                ..ToolDef::default()
            });
            defs.push(ToolDef {
                name: help_tool_name(name),
                plugin: "output".into(),
                description: format!(
                    "How to use {}: capabilities, parameters and meta conventions.",
                    send_tool_name(name)
                ),
                parameters: no_parameters(),
                no_memory: true,
                parallel_safe: true,
                ..ToolDef::default()
            });
        }
        if !channels.is_empty() {
            defs.push(ToolDef {
                name: LIST_CHANNELS_TOOL.into(),
                plugin: "output".into(),
                description: "List the output channels with their descriptions and tools.".into(),
                parameters: no_parameters(),
                no_memory: true,
                parallel_safe: true,
                ..ToolDef::default()
            });
        }
        defs
    }

    /// Handle an output tool call for `call`; `None` when `tool_name` is not an output tool.
    ///
    /// `Ok` is what goes back to the model after a delivery (exactly `"ok"` when confirmed: echoing
    /// the channel's full answer made models loop on sends) or a help/list text; `Err` explains why
    /// nothing was delivered: `InvalidArguments` for a call the model got wrong, `Unavailable` for
    /// an unknown channel, `Denied` when before_output blocked or cleared the payload, the
    /// channel's own error (prefixed with the channel) when it failed. A send runs before_output on
    /// a fresh context holding only the payload (and `extra.output_channel`), so reply filters
    /// apply to tool deliveries too.
    pub fn dispatch(
        &self,
        call: &CallContext,
        tool_name: &str,
        args: &Value,
        pipeline: &StagePipeline,
    ) -> Option<Result<String, HandlerError>> {
        if tool_name == LIST_CHANNELS_TOOL {
            return Some(Ok(self.list_text()));
        }
        let rest = tool_name.strip_prefix(OUTPUT_SEND_PREFIX)?;
        // No channel name ends in "_help" (see the name rule), so this split is unambiguous.
        Some(match rest.strip_suffix(OUTPUT_HELP_SUFFIX) {
            Some(channel) => self.help_text(channel),
            None => self.send(call, rest, args, pipeline),
        })
    }

    fn send(
        &self,
        call: &CallContext,
        channel: &str,
        args: &Value,
        pipeline: &StagePipeline,
    ) -> Result<String, HandlerError> {
        let args = arguments_object(args);
        let payload = match args.get("payload") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        if channel.is_empty() || payload.is_empty() {
            return Err(HandlerError::InvalidArguments(usage(channel)));
        }
        let (info, handler) = self.find(channel).ok_or_else(|| unknown_channel(channel))?;
        let kind = match args.get("type").and_then(Value::as_str).map(str::trim) {
            None | Some("") => "text".to_owned(),
            Some(k) => k.to_ascii_lowercase(),
        };
        let Some(needed) = Caps::for_send_type(&kind) else {
            return Err(HandlerError::InvalidArguments(format!(
                "unknown type {kind:?} for [{channel}]: use one of {}",
                SEND_TYPES.join(", ")
            )));
        };
        if !info.caps.contains(needed) {
            return Err(HandlerError::InvalidArguments(format!(
                "channel [{channel}] cannot send type {kind} (it supports: {})",
                info.caps.names().join(", ")
            )));
        }
        let meta = parse_meta(args.get("meta")).map_err(HandlerError::InvalidArguments)?;

        let mut ctx = StageContext::with_final_text(payload);
        ctx.extra
            .insert("output_channel".into(), Value::String(channel.to_owned()));
        if pipeline.run(Stage::BeforeOutput, call, &mut ctx).cancelled {
            return Err(HandlerError::Cancelled);
        }
        if let Some(response) = ctx.response {
            return Err(HandlerError::Denied(format!(
                "blocked by a plugin: {response}"
            )));
        }
        if ctx.final_text.trim().is_empty() {
            return Err(HandlerError::Denied("cleared by a plugin".to_owned()));
        }

        let result = handler
            .send(call, &ctx.final_text, &kind, meta.as_ref())
            .map_err(|err| err.context(&format!("sending through [{channel}] failed")))?;
        match result.get("status").and_then(Value::as_str) {
            Some(status @ ("unconfirmed" | "queued")) => {
                let note = result.get("note").and_then(Value::as_str).unwrap_or("");
                let mut msg =
                    format!("sent through [{channel}], but delivery is unconfirmed ({status})");
                if !note.is_empty() {
                    let _ = write!(msg, ": {note}");
                }
                Ok(msg)
            }
            _ => Ok("ok".to_owned()),
        }
    }

    fn help_text(&self, channel: &str) -> Result<String, HandlerError> {
        let (info, _) = self.find(channel).ok_or_else(|| unknown_channel(channel))?;
        let send = send_tool_name(channel);
        Ok(format!(
            "output channel [{channel}]: {desc}\n\
             capabilities: {caps}\n\
             tool: {send}\n\
             parameters:\n\
             - payload (string, required): the content to send; for image/file a path or URL\n\
             - type (string, optional, default \"text\"): one of text, voice, image, file; \
             it must be one of the channel's capabilities\n\
             - meta (string, optional): a JSON object string with routing hints:\n\
             \x20 - group_id: the group to send to\n\
             \x20 - user_id: the user to send to (a private message when no group_id)\n\
             \x20 - reply_to: the id of the message being answered\n\
             example: {send}({{\"payload\": \"Dinner is ready\", \"type\": \"text\", \
             \"meta\": \"{{\\\"group_id\\\": \\\"123456\\\", \\\"reply_to\\\": \\\"987\\\"}}\"}})\n\
             The answer is \"ok\" once the channel accepted the message; do not send it again.",
            desc = info.description,
            caps = info.caps.names().join(", "),
        ))
    }

    fn list_text(&self) -> String {
        let channels = self.channels.read();
        if channels.is_empty() {
            return "no output channels are registered".to_owned();
        }
        let mut out = format!("output channels ({}):\n", channels.len());
        for c in channels.iter() {
            let name = &c.info.name;
            let _ = writeln!(
                out,
                "- [{name}] {}; capabilities: {}; tools: {}, {}",
                c.info.description,
                c.info.caps.names().join(", "),
                send_tool_name(name),
                help_tool_name(name),
            );
        }
        out
    }
}

/// The arguments as an object; models sometimes send the object as a JSON string.
fn arguments_object(args: &Value) -> Map<String, Value> {
    match args {
        Value::Object(map) => map.clone(),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        },
        _ => Map::new(),
    }
}

/// `meta` is documented as a JSON object string; an object given directly is accepted too.
fn parse_meta(meta: Option<&Value>) -> Result<Option<Value>, String> {
    let text = match meta {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(_)) => return Ok(meta.cloned()),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::String(s)) => s,
        Some(other) => return Err(meta_error(&format!("got {other}"))),
    };
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(Some(v)),
        Ok(other) => Err(meta_error(&format!("got {other}"))),
        Err(err) => Err(meta_error(&err.to_string())),
    }
}

fn unknown_channel(channel: &str) -> HandlerError {
    HandlerError::Unavailable(format!(
        "unknown output channel [{channel}]; call {LIST_CHANNELS_TOOL} to see the channels"
    ))
}

fn meta_error(detail: &str) -> String {
    format!(
        "meta must be a JSON object string such as {{\"group_id\": \"123456\"}} ({detail}); \
         nothing was sent"
    )
}

fn usage(channel: &str) -> String {
    let tool = if channel.is_empty() {
        format!("{OUTPUT_SEND_PREFIX}<channel>")
    } else {
        send_tool_name(channel)
    };
    format!(
        "usage: {tool}(payload: string, required; type: text|voice|image|file, default text; \
         meta: JSON object string, optional). The payload must not be empty; \
         call {LIST_CHANNELS_TOOL} to see the channels."
    )
}

fn send_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "payload": {
                "type": "string",
                "description": "The content to send; for image/file a path or URL."
            },
            "meta": {
                "type": "string",
                "description": "Optional JSON object string with routing hints: group_id, user_id, reply_to."
            },
            "type": {
                "type": "string",
                "enum": SEND_TYPES,
                "default": "text",
                "description": "What the payload is; must be one of the channel's capabilities."
            }
        },
        "required": ["payload"]
    })
}

fn no_parameters() -> Value {
    json!({"type": "object", "properties": {}})
}
