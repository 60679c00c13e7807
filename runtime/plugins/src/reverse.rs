//! The reverse calls that reach kernel services: memory and LLM through the [`KernelPort`],
//! settings through the settings registry. The capability gate has run before any of these.

use std::os::unix::fs::DirBuilderExt;
use std::time::{Duration, Instant};

use hearth_rpc::{ErrorKind, HandlerError, methods};
use hearth_settings::{Access, SettingDef, SettingsError};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::by_tool::ByTool;
use crate::port::Injection;
use crate::service::{PluginService, injected_text, injection, media_blocks, priority};

/// How long `llm.complete` may take when the call carries no deadline.
const LLM_DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

fn field<'a>(method: &str, params: &'a Value, name: &str) -> Result<&'a str, HandlerError> {
    params[name].as_str().ok_or_else(|| {
        HandlerError::invalid_arguments(format!("{method}: {name} must be a string"))
    })
}

/// The names the facts are about, subjects and objects, each once, in the facts' order.
fn entities(facts: &Value) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for fact in facts.as_array().into_iter().flatten() {
        for side in ["subject", "object"] {
            if let Some(name) = fact[side]
                .as_str()
                .filter(|n| !names.iter().any(|m| m == n))
            {
                names.push(name.to_owned());
            }
        }
    }
    names
}

/// How long a call served by a kernel tool may take: its `ctx.timeout_ms`, or 30 s.
fn call_timeout(params: &Value) -> Duration {
    params["ctx"]["timeout_ms"]
        .as_u64()
        .map_or(TOOL_DEFAULT_TIMEOUT, Duration::from_millis)
}

fn settings_error(method: &str, e: SettingsError) -> HandlerError {
    let kind = match e {
        SettingsError::Denied { .. } => ErrorKind::Denied,
        SettingsError::BadKey { .. } | SettingsError::WrongType { .. } => {
            ErrorKind::InvalidArguments
        }
        _ => ErrorKind::Failed,
    };
    HandlerError::new(kind, format!("{method}: {e}"))
}

#[derive(Deserialize)]
struct ChatMessage {
    role: String,
    content: String,
}

/// How long `io.reply` waits at most in one call; the plugin asks again for a longer answer.
const REPLY_WAIT_MAX: Duration = Duration::from_secs(30);
/// How long `io.injectInputSync` waits for the reply when the call carries no deadline.
const SYNC_DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a method served by a kernel tool may take when the call carries no deadline.
const TOOL_DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

impl PluginService {
    /// A channel's own calls: `io.submit`, `io.reply`, `io.stop`, `io.history`, and
    /// `kernel.control` (the operator's requests a web page makes).
    pub(crate) fn channel(&self, method: &str, params: Value) -> Result<Value, HandlerError> {
        if method == methods::IO_SUBMIT {
            return self.submit(params);
        }
        let plugin = self.link.name.as_str();
        let channel = params["channel"].as_str().unwrap_or(plugin);
        match method {
            methods::IO_REPLY => {
                let id = field(method, &params, "request_id")?;
                let wait = params["timeout_ms"]
                    .as_u64()
                    .map_or(REPLY_WAIT_MAX, Duration::from_millis)
                    .min(REPLY_WAIT_MAX);
                self.port.reply(id, wait)
            }
            methods::IO_STOP => self.port.stop(plugin, channel),
            methods::IO_HISTORY => {
                let limit = params["limit"].as_u64().unwrap_or(50).clamp(1, 500) as usize;
                self.port.history(channel, limit)
            }
            _ => self.port.control(plugin, &params),
        }
    }

    /// `io.submit`: the input (with the media of its optional `blocks`) is journaled and
    /// queued; its request id and stream tag come back at once.
    fn submit(&self, mut params: Value) -> Result<Value, HandlerError> {
        const METHOD: &str = methods::IO_SUBMIT;
        let media = match params.get("blocks") {
            None | Some(Value::Null) => Vec::new(),
            Some(_) => media_blocks(METHOD, &mut params)?,
        };
        let plugin = self.link.name.as_str();
        let channel = params["channel"].as_str().unwrap_or(plugin);
        let text = field(METHOD, &params, "text")?;
        let priority = priority(METHOD, &params["priority"])?;
        let how = Injection {
            interrupt: params["interrupt"].as_bool().unwrap_or(false),
            priority,
            no_memory: params["no_memory"] == true,
            media,
        };
        self.port.submit(plugin, channel, text, how)
    }

    /// `io.injectInputSync` and `io.injectMediaSync`: the input is submitted as `io.submit`
    /// would, and its reply waited for within the call's deadline (`ctx.timeout_ms`, else
    /// [`SYNC_DEFAULT_TIMEOUT`]) → `{reply, request_id}`. An answer that ended in an error or
    /// was skipped (its media could not be stored, say) is the call's error.
    pub(crate) fn inject_sync(
        &self,
        method: &str,
        mut params: Value,
    ) -> Result<Value, HandlerError> {
        let plugin = self.link.name.as_str();
        // Tasks run one at a time: an input injected from inside a running tool call waits for
        // that call's task, which waits for this call, until the tool's timeout ends both.
        let call = params["ctx"]["call_id"].as_str().unwrap_or_default();
        if !call.is_empty() && self.link.tool_blocks.running(call) {
            return Err(HandlerError::new(
                ErrorKind::Failed,
                format!(
                    "{method}: called from inside a running tool call, whose turn must end \
                     before the injected input can run; use io.injectText (or io.submit) \
                     and ask io.reply once the tool has answered"
                ),
            ));
        }
        let mut how = injection(method, &mut params)?;
        // A plain input: the original's sync injection never preempts.
        how.interrupt = false;
        how.priority = None;
        let channel = params["channel"].as_str().unwrap_or(plugin);
        let text = injected_text(method, &params, &how)?;
        let submitted = self.port.submit(plugin, channel, text, how)?;
        let id = field(method, &submitted, "request_id")?.to_owned();
        let deadline = Instant::now()
            + params["ctx"]["timeout_ms"]
                .as_u64()
                .map_or(SYNC_DEFAULT_TIMEOUT, Duration::from_millis);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let reply = self.port.reply(&id, left.min(REPLY_WAIT_MAX))?;
            if reply["done"] == true {
                if reply["error"] == true || reply["skipped"] == true {
                    let why = reply["reason"]
                        .as_str()
                        .or(reply["content"].as_str())
                        .unwrap_or("no reason given");
                    return Err(HandlerError::new(
                        ErrorKind::Failed,
                        format!("{method}: input {id} was not answered: {why}"),
                    ));
                }
                return Ok(json!({"reply": reply["content"], "request_id": id}));
            }
            if left.is_zero() {
                return Err(HandlerError::new(
                    ErrorKind::TimedOut,
                    format!("{method}: input {id} is still running; ask io.reply for its answer"),
                ));
            }
        }
    }

    /// `plugin.listLoaded`, `plugin.isDisabled`, `plugin.reloadOne`: the operator's plugin
    /// requests (`kernel.control`'s `plugin` actions) in the original's shapes.
    pub(crate) fn plugins(&self, method: &str, params: &Value) -> Result<Value, HandlerError> {
        let plugin = self.link.name.as_str();
        let (action, name) = match method {
            methods::PLUGIN_LIST_LOADED => ("list", None),
            methods::PLUGIN_IS_DISABLED => ("info", Some(field(method, params, "name")?)),
            _ => ("reload", Some(field(method, params, "name")?)),
        };
        let plugins = self
            .port
            .plugin_action(plugin, action, name)
            .map_err(|e| HandlerError::new(e.kind, format!("{method}: {}", e.message)))?;
        Ok(match method {
            methods::PLUGIN_LIST_LOADED => json!({"plugins": plugins["plugins"]}),
            methods::PLUGIN_IS_DISABLED => json!({"disabled": plugins["enabled"] == false}),
            _ => json!({}),
        })
    }

    /// A method served by one of the kernel's tools: `row` says which ([`crate::by_tool`]).
    pub(crate) fn by_tool(&self, row: &ByTool, mut params: Value) -> Result<Value, HandlerError> {
        let method = row.method;
        let timeout = call_timeout(&params);
        if params.is_null() {
            params = json!({});
        }
        if let Some(map) = params.as_object_mut() {
            map.remove("ctx");
        }
        let args = (row.args)(method, params)?;
        let result = self
            .port
            .builtin_tool(&self.link.name, row.tool, &args, timeout)?;
        Ok((row.answer)(result))
    }

    /// `memory.recall` / `memory.commit`.
    pub(crate) fn memory(&self, method: &str, params: &Value) -> Result<Value, HandlerError> {
        let plugin = self.link.name.as_str();
        if method == methods::MEMORY_RECALL {
            // The original sent a list of entity names; a list is joined into one query.
            let query = match &params["query"] {
                Value::String(s) => s.clone(),
                Value::Array(words) => words
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => {
                    return Err(HandlerError::invalid_arguments(format!(
                        "{method}: query must be a string or a list of strings"
                    )));
                }
            };
            let top_k = params["top_k"].as_u64().unwrap_or(3).clamp(1, 50) as usize;
            let mut answer = self.port.memory_recall(plugin, &query, top_k)?;
            // The original answered with the graph's entities and relations: they come beside
            // the text, empty where there is no graph (its `depth` is the graph's own, 2).
            let facts = self.port.graph_recall(&query, top_k).unwrap_or_else(|e| {
                // No graph is the usual reason; a graph that fails is worth a warning.
                if e.kind == ErrorKind::Unavailable {
                    tracing::debug!(plugin, "{method}: no facts: {}", e.message);
                } else {
                    tracing::warn!(plugin, "{method}: no facts: {}", e.message);
                }
                Value::Array(Vec::new())
            });
            answer["entities"] = json!(entities(&facts));
            answer["relations"] = facts;
            return Ok(answer);
        }
        if let Some(triples) = params.get("triples") {
            let facts = crate::triples::facts(method, triples)?;
            let timeout = call_timeout(params);
            // Each fact through the model's own tool, so a plugin's fact obeys its rules; one
            // the graph refuses is reported in its place and does not undo the others.
            let results: Vec<Value> = facts
                .iter()
                .map(|args| {
                    self.port
                        .builtin_tool(plugin, "memory_commit", args, timeout)
                        .unwrap_or_else(|e| json!({"error": e.message}))
                })
                .collect();
            let committed = results.iter().filter(|r| r.get("error").is_none()).count();
            return Ok(json!({"committed": committed, "results": results}));
        }
        let content = field(method, params, "content")?;
        let summary = params["summary"].as_str().unwrap_or_default();
        self.port.memory_commit(plugin, content, summary)
    }

    /// `llm.listSources`, `llm.currentSource`, `llm.setSource`, `llm.complete`.
    pub(crate) fn llm(&self, method: &str, params: &Value) -> Result<Value, HandlerError> {
        match method {
            methods::LLM_LIST_SOURCES => return self.port.llm_sources(),
            methods::LLM_CURRENT_SOURCE => return self.port.llm_current_source(),
            methods::LLM_SET_SOURCE => {
                let source = field(method, params, "source")?;
                return self.port.llm_set_source(&self.link.name, source);
            }
            _ => {}
        }
        let messages: Vec<ChatMessage> = serde_json::from_value(params["messages"].clone())
            .map_err(|e| {
                HandlerError::invalid_arguments(format!(
                    "{method}: messages must be a list of {{role, content}}: {e}"
                ))
            })?;
        if messages.is_empty() {
            return Err(HandlerError::invalid_arguments(format!(
                "{method}: messages is empty"
            )));
        }
        let timeout = params["ctx"]["timeout_ms"]
            .as_u64()
            .map_or(LLM_DEFAULT_TIMEOUT, Duration::from_millis);
        let messages: Vec<(String, String)> =
            messages.into_iter().map(|m| (m.role, m.content)).collect();
        self.port.llm_complete(&self.link.name, &messages, timeout)
    }

    /// `settings.*`: the plugin's own keys (`get`, `set`, `list`, `defs`, `registerDef`), and
    /// with `settings_cross` everybody's (`getCore`, `setCore`, `getPlugin`, `setPlugin`,
    /// `listCore`, `listPlugin`).
    pub(crate) fn settings(&self, method: &str, params: &Value) -> Result<Value, HandlerError> {
        let Some(settings) = &self.settings else {
            return Err(HandlerError::new(
                ErrorKind::Unavailable,
                format!("{method}: this kernel has no settings registry"),
            ));
        };
        let plugin = self.link.name.as_str();
        let mut who = Access::plugin(plugin);
        if self.grants.allows(hearth_rpc::capability::SETTINGS_CROSS) {
            who = who.cross();
        }
        let err = |e| settings_error(method, e);
        // The cross-namespace forms name the full key; `core.` / `plugin.<p>.` is added here.
        let key = |prefix: String| -> Result<String, HandlerError> {
            Ok(format!("{prefix}{}", field(method, params, "key")?))
        };
        let other = || -> Result<String, HandlerError> {
            Ok(format!("plugin.{}.", field(method, params, "plugin")?))
        };
        let value = || params.get("value").cloned().unwrap_or(Value::Null);
        let prefix = params["prefix"].as_str().unwrap_or_default();
        match method {
            methods::SETTINGS_GET => {
                let key = key(String::new())?;
                Ok(json!({"value": settings.get_as(&who, &key).map_err(err)?}))
            }
            methods::SETTINGS_SET => {
                let key = key(String::new())?;
                settings.set_as(&who, &key, value()).map_err(err)?;
                Ok(json!({}))
            }
            "settings.getCore" | "settings.getPlugin" => {
                let full = key(if method == "settings.getCore" {
                    "core.".into()
                } else {
                    other()?
                })?;
                Ok(json!({"value": settings.get_as(&who, &full).map_err(err)?}))
            }
            "settings.setCore" | "settings.setPlugin" => {
                let full = key(if method == "settings.setCore" {
                    "core.".into()
                } else {
                    other()?
                })?;
                settings.set_as(&who, &full, value()).map_err(err)?;
                Ok(json!({}))
            }
            "settings.list" | "settings.listCore" | "settings.listPlugin" => {
                let base = match method {
                    "settings.listCore" => format!("core.{prefix}"),
                    "settings.listPlugin" => format!("{}{prefix}", other()?),
                    _ => prefix.to_owned(),
                };
                let list = settings.list_as(&who, &base).map_err(err)?;
                Ok(json!({"settings": list}))
            }
            // Everything it may read, secrets hidden: with `settings_cross` (the gate's
            // group), every namespace.
            "settings.dump" => {
                let mut all = settings.list_as(&who, "core.").map_err(err)?;
                all.extend(settings.list_as(&who, "plugin.").map_err(err)?);
                Ok(json!({"settings": all}))
            }
            // The plugins that have settings: defined, in the file, or set.
            "settings.plugins" => {
                let names: std::collections::BTreeSet<String> = settings
                    .list_as(&who, "plugin.")
                    .map_err(err)?
                    .into_iter()
                    .filter_map(|s| {
                        let key = s.key.strip_prefix("plugin.")?;
                        Some(key.split_once('.')?.0.to_owned())
                    })
                    .collect();
                Ok(json!({"plugins": names}))
            }
            "settings.defs" => {
                let base = who.resolve_prefix(prefix).map_err(err)?;
                Ok(json!({"defs": settings.defs(&base)}))
            }
            "settings.registerDef" => {
                let def: SettingDef =
                    serde_json::from_value(params["def"].clone()).map_err(|e| {
                        HandlerError::invalid_arguments(format!(
                            "{method}: def must be {{key, kind, default, description}}: {e}"
                        ))
                    })?;
                // Only its own keys, whatever it is granted: definitions belong to their owner.
                settings
                    .define_as(&Access::plugin(plugin), def)
                    .map_err(err)?;
                Ok(json!({}))
            }
            other => Err(HandlerError::new(
                ErrorKind::Unavailable,
                format!("{other} is not served by this daemon yet"),
            )),
        }
    }

    /// `settings.dataDir`: the plugin's own data directory, `data/` in its plugin directory,
    /// created owner-only on first ask → `{dir}`. It goes with the plugin when it is removed.
    pub(crate) fn data_dir(&self) -> Result<Value, HandlerError> {
        const METHOD: &str = methods::SETTINGS_DATA_DIR;
        let Some(home) = &self.home else {
            return Err(HandlerError::new(
                ErrorKind::Unavailable,
                format!(
                    "{METHOD}: plugin {} has no directory of its own",
                    self.link.name
                ),
            ));
        };
        let dir = home.join("data");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| {
                HandlerError::new(
                    ErrorKind::Failed,
                    format!("{METHOD}: {} could not be created: {e}", dir.display()),
                )
            })?;
        Ok(json!({"dir": dir}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_are_the_facts_names_each_once_in_order() {
        let facts = json!([
            {"subject": "Ana", "predicate": "lives_in", "object": "Braga"},
            {"subject": "Ben", "predicate": "knows", "object": "Ana"},
            {"subject": "Ana", "predicate": "likes"},
        ]);
        assert_eq!(entities(&facts), ["Ana", "Braga", "Ben"]);
        assert!(entities(&json!({"unavailable": "no graph"})).is_empty());
    }
}
