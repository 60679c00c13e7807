//! The provider-neutral request and response shapes (SPEC §7.1). `Message` serialises to the
//! OpenAI chat shape, which every adapter starts from.

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions to the model.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

impl Role {
    /// The role's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// A tool call as the model made it: arguments already parsed into JSON.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolCallOut {
    /// The call id the result refers back to.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The parsed arguments.
    pub arguments: Value,
}

/// An item of the media store a message shows the model, by reference: what a persisted
/// frame keeps (a digest, not megabytes), resolved into the item's bytes only for a source
/// that takes images ([`Message::image_urls`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MediaPart {
    /// The item's content address (lower-case hex sha256).
    pub digest: String,
    /// Its MIME type.
    pub mime: String,
}

/// One chat message.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The text.
    pub content: String,
    /// The model's reasoning, when it gave any.
    pub reasoning_content: String,
    /// For a tool message: the call it answers.
    pub tool_call_id: String,
    /// For an assistant message: the tools it called.
    pub tool_calls: Vec<ToolCallOut>,
    /// Media the message shows, by reference (serialised as Hearth's own `media` field, which
    /// the provider manager always removes before a request leaves: it becomes
    /// [`image_urls`](Self::image_urls) for a source that takes images, and nothing otherwise,
    /// the text's marker lines standing in).
    pub media: Vec<MediaPart>,
    /// Images sent with the text, as URLs (data URLs of the items' bytes): serialised as
    /// OpenAI content parts, `[{"type": "text", …}, {"type": "image_url", …}]`.
    pub image_urls: Vec<String>,
    /// The message exists to show its media (a tool's images): a source shown none of them
    /// is not sent it (Hearth's own field, like `media`).
    pub media_only: bool,
}

impl Message {
    /// A message of `role` with `content`.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            reasoning_content: String::new(),
            tool_call_id: String::new(),
            tool_calls: Vec::new(),
            media: Vec::new(),
            image_urls: Vec::new(),
            media_only: false,
        }
    }

    /// The same message showing `media`.
    pub fn with_media(mut self, media: Vec<MediaPart>) -> Self {
        self.media = media;
        self
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    /// A tool result answering call `call_id`.
    pub fn tool(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        let mut m = Self::new(Role::Tool, content);
        m.tool_call_id = call_id.into();
        m
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("role", self.role.as_str())?;
        // OpenAI wants `content: null` on an assistant message that only calls tools.
        if !self.image_urls.is_empty() {
            let mut parts = Vec::with_capacity(self.image_urls.len() + 1);
            if !self.content.is_empty() {
                parts.push(json!({"type": "text", "text": self.content}));
            }
            parts.extend(
                self.image_urls
                    .iter()
                    .map(|url| json!({"type": "image_url", "image_url": {"url": url}})),
            );
            map.serialize_entry("content", &parts)?;
        } else if self.content.is_empty() && !self.tool_calls.is_empty() {
            map.serialize_entry("content", &Value::Null)?;
        } else {
            map.serialize_entry("content", &self.content)?;
        }
        if !self.media.is_empty() {
            map.serialize_entry("media", &self.media)?;
        }
        if self.media_only {
            map.serialize_entry("media_only", &true)?;
        }
        if !self.reasoning_content.is_empty() {
            map.serialize_entry("reasoning_content", &self.reasoning_content)?;
        }
        if !self.tool_call_id.is_empty() {
            map.serialize_entry("tool_call_id", &self.tool_call_id)?;
        }
        if !self.tool_calls.is_empty() {
            let calls: Vec<Value> = self
                .tool_calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                           "function": {"name": c.name, "arguments": c.arguments.to_string()}})
                })
                .collect();
            map.serialize_entry("tool_calls", &calls)?;
        }
        map.end()
    }
}

/// Reads the shape `Serialize` writes (frames are persisted in it): `content` may be null and
/// tool-call arguments are a JSON string inside `function`.
impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct WireFunction {
            name: String,
            #[serde(default)]
            arguments: String,
        }
        #[derive(Deserialize)]
        struct WireCall {
            #[serde(default)]
            id: String,
            function: WireFunction,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum WireContent {
            Text(String),
            Parts(Vec<Value>),
        }
        #[derive(Deserialize)]
        struct Wire {
            role: Role,
            #[serde(default)]
            content: Option<WireContent>,
            #[serde(default)]
            media: Vec<MediaPart>,
            #[serde(default)]
            media_only: bool,
            #[serde(default)]
            reasoning_content: String,
            #[serde(default)]
            tool_call_id: String,
            #[serde(default)]
            tool_calls: Vec<WireCall>,
        }
        let w = Wire::deserialize(d)?;
        let (content, image_urls) = match w.content {
            None => (String::new(), Vec::new()),
            Some(WireContent::Text(text)) => (text, Vec::new()),
            Some(WireContent::Parts(parts)) => {
                let mut text = String::new();
                let mut urls = Vec::new();
                for part in &parts {
                    if let Some(t) = part.get("text").and_then(Value::as_str) {
                        text.push_str(t);
                    } else if let Some(url) = part
                        .get("image_url")
                        .and_then(|i| i.get("url").and_then(Value::as_str).or(i.as_str()))
                    {
                        urls.push(url.to_owned());
                    }
                }
                (text, urls)
            }
        };
        Ok(Message {
            role: w.role,
            content,
            media: w.media,
            media_only: w.media_only,
            image_urls,
            reasoning_content: w.reasoning_content,
            tool_call_id: w.tool_call_id,
            tool_calls: w
                .tool_calls
                .into_iter()
                .map(|c| ToolCallOut {
                    id: c.id,
                    arguments: serde_json::from_str(&c.function.arguments)
                        .unwrap_or(Value::Object(Default::default())),
                    name: c.function.name,
                })
                .collect(),
        })
    }
}

/// A tool offered to the model (OpenAI `tools[]` entry).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON schema of its arguments.
    pub parameters: Value,
}

impl Serialize for ToolSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        json!({"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}})
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ToolSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct WireFunction {
            name: String,
            #[serde(default)]
            description: String,
            #[serde(default)]
            parameters: Value,
        }
        #[derive(Deserialize)]
        struct Wire {
            function: WireFunction,
        }
        let w = Wire::deserialize(d)?;
        Ok(ToolSpec {
            name: w.function.name,
            description: w.function.description,
            parameters: w.function.parameters,
        })
    }
}

/// What the turn engine asks of a provider.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChatRequest {
    /// The model to ask ("" = the source's own).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// The prompt.
    pub messages: Vec<Message>,
    /// Sampling temperature; `None` = the source's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Completion token limit.
    pub max_tokens: u32,
    /// Stream the answer.
    pub stream: bool,
    /// Tools offered to the model.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// `auto`, `none` or a tool name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<String>,
    /// Ask the model not to think aloud.
    pub disable_thinking: bool,
}

impl ChatRequest {
    /// The turn engine's defaults: 4 096 completion tokens, streaming, `tool_choice` auto when tools exist.
    pub fn new(messages: Vec<Message>, tools: Vec<ToolSpec>) -> Self {
        let tool_choice = (!tools.is_empty()).then(|| "auto".to_string());
        Self {
            model: String::new(),
            messages,
            temperature: None,
            max_tokens: 4096,
            stream: true,
            tools,
            tool_choice,
            disable_thinking: true,
        }
    }
}

/// Tokens one call used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt: u64,
    /// Completion tokens.
    pub completion: u64,
    /// Both.
    pub total: u64,
}

/// A fragment of a streamed tool call; fragments of one call share `stream_index`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCallDelta {
    /// Which call of the answer this fragment belongs to.
    pub stream_index: u32,
    /// The call id, in the first fragment.
    #[serde(default)]
    pub id: String,
    /// The tool name, in the first fragment.
    #[serde(default)]
    pub name: String,
    /// A piece of the arguments JSON.
    #[serde(default)]
    pub arguments: String,
}

/// One streamed piece of an answer (SPEC §7.1 StreamChunk).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamChunk {
    /// Answer text.
    #[serde(default)]
    pub content: String,
    /// Reasoning text.
    #[serde(default)]
    pub reasoning: String,
    /// Tool-call fragments.
    #[serde(default)]
    pub tool_calls: Vec<ToolCallDelta>,
    /// Why the answer ended, in its last chunk.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Token usage, when the source reports it.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// The answer is complete.
    #[serde(default)]
    pub done: bool,
}

impl StreamChunk {
    /// A chunk of answer text.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            ..Self::default()
        }
    }
}

/// The accumulated answer of one call.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ChatResponse {
    /// The answer text.
    pub content: String,
    /// The reasoning text.
    pub reasoning: String,
    /// Why the answer ended.
    pub finish_reason: Option<String>,
    /// Tokens the call used.
    pub usage: Usage,
    /// The tools the model called.
    pub tool_calls: Vec<ToolCallOut>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assistant_with_calls_has_null_content_and_string_arguments() {
        let mut m = Message::new(Role::Assistant, "");
        m.tool_calls.push(ToolCallOut {
            id: "c1".into(),
            name: "get_weather".into(),
            arguments: json!({"city": "Paris"}),
        });
        let v = serde_json::to_value(&m).expect("serialises");
        assert_eq!(v["content"], Value::Null);
        assert_eq!(v["tool_calls"][0]["type"], "function");
        assert_eq!(
            v["tool_calls"][0]["function"]["arguments"],
            "{\"city\":\"Paris\"}"
        );
        let t = serde_json::to_value(Message::tool("c1", "sunny")).expect("serialises");
        assert_eq!(
            t,
            json!({"role": "tool", "content": "sunny", "tool_call_id": "c1"})
        );
    }

    #[test]
    fn messages_and_tool_specs_round_trip() {
        let mut m = Message::new(Role::Assistant, "");
        m.reasoning_content = "thinking".into();
        m.tool_calls.push(ToolCallOut {
            id: "c1".into(),
            name: "f".into(),
            arguments: json!({"a": [1, 2]}),
        });
        let back: Message =
            serde_json::from_value(serde_json::to_value(&m).expect("ser")).expect("de");
        assert_eq!(back, m);
        let t = Message::tool("c1", "done");
        assert_eq!(
            serde_json::from_value::<Message>(serde_json::to_value(&t).expect("ser")).expect("de"),
            t
        );
        let spec = ToolSpec {
            name: "t".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        };
        assert_eq!(
            serde_json::from_value::<ToolSpec>(serde_json::to_value(&spec).expect("ser"))
                .expect("de"),
            spec
        );
    }

    #[test]
    fn request_defaults() {
        let r = ChatRequest::new(vec![Message::user("hi")], vec![]);
        let v = serde_json::to_value(&r).expect("serialises");
        assert_eq!(v["max_tokens"], 4096);
        assert_eq!(v["disable_thinking"], true);
        assert!(v.get("tool_choice").is_none() && v.get("tools").is_none());
        let spec = ToolSpec {
            name: "t".into(),
            description: "d".into(),
            parameters: json!({}),
        };
        let r = ChatRequest::new(vec![], vec![spec]);
        assert_eq!(
            serde_json::to_value(&r).expect("serialises")["tool_choice"],
            "auto"
        );
    }
}
