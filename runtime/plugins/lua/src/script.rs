//! One plugin script in its own sandboxed state: it runs its chunk once, collecting the tools,
//! stage handlers and output channels the `sdk` table declares, then runs one handler per call
//! under the call budget; `sdk.call` reaches the kernel through the plugin's capability gate. Not `Send`
//! (a Lua state belongs to one thread); [`crate::LuaPlugin`] owns it on a thread of its own.

use hearth_llm::adapter::AdapterLimits;
use hearth_llm::adapter::sandbox::{self, Meter, Trip, describe, is_memory};
use hearth_rpc::HandlerError;
use hearth_stages::{ContextPolicy, RecallPolicy, Stage};
use mlua::chunk::ChunkMode;
use mlua::{Function, Lua, LuaSerdeExt, Table, Value};
use serde_json::Value as Json;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// Why a script did not load or a handler call failed; the text is the script's own message
/// or the limit it hit, as the model and the log see it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptError {
    /// The sandboxed state or its `sdk` table could not be set up.
    #[error("{message}")]
    Setup {
        /// Lua's message.
        message: String,
    },
    /// The script does not parse.
    #[error("syntax error: {message}")]
    Syntax {
        /// Lua's message (`main.lua:3: '=' expected near 'is'`).
        message: String,
    },
    /// The script raised an error, at its top level or in a handler.
    #[error("{message}")]
    Runtime {
        /// The script's message (`main.lua:12: what went wrong`), without the traceback.
        message: String,
    },
    /// The call (or the load) executed more instructions than its budget.
    #[error("exceeded its instruction budget ({limit} instructions)")]
    Instructions {
        /// The budget.
        limit: u64,
    },
    /// The call (or the load) ran longer than its time limit.
    #[error("exceeded its time limit ({limit:?})")]
    Time {
        /// The limit.
        limit: Duration,
    },
    /// The state ran out of its memory limit.
    #[error("ran out of memory (limit {limit} bytes)")]
    Memory {
        /// The limit, in bytes.
        limit: usize,
    },
    /// An `sdk.tool`, `sdk.stage` or `sdk.channel` declaration the plugin host cannot take.
    #[error("{what}")]
    Declaration {
        /// What is wrong, naming the declaration (`sdk.tool x: \`handler\` must be a function`).
        what: String,
    },
    /// The call names a handler the script did not declare.
    #[error("the script declares no {kind} {name}")]
    NoHandler {
        /// `tool`, `stage` or `output channel`.
        kind: &'static str,
        /// The name called.
        name: String,
    },
    /// The call's arguments or context could not become Lua values, or the handler's result
    /// is not JSON.
    #[error("{message}")]
    Json {
        /// The conversion's message.
        message: String,
    },
}

/// A declaration refused by the `sdk` functions: raised into Lua as an error value (its text
/// is what a `pcall` sees) and recognised again as [`ScriptError::Declaration`].
#[derive(Debug)]
struct BadDeclaration(String);

impl std::fmt::Display for BadDeclaration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadDeclaration {}

fn bad_declaration(what: String) -> mlua::Error {
    mlua::Error::external(BadDeclaration(what))
}

/// A tool's memory policy `key` from its declaration `t` (absent: none); `allowed` names the
/// values it may take, for the error.
fn policy<P: serde::de::DeserializeOwned + Default>(
    t: &Table,
    tool: &str,
    key: &str,
    allowed: &str,
) -> mlua::Result<P> {
    let Some(value) = t.get::<Option<String>>(key)? else {
        return Ok(P::default());
    };
    serde_json::from_value(Json::String(value.clone())).map_err(|_| {
        bad_declaration(format!(
            "sdk.tool {tool}: {key} must be {allowed}, not {value:?}"
        ))
    })
}

/// A tool as a script declared it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDecl {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON schema of its arguments.
    pub parameters: Json,
    /// `context_policy = "prune"`: its output prunes the working window.
    pub context_policy: ContextPolicy,
    /// `recall_policy = "auto"`: its output recalls memory into the prompt.
    pub recall_policy: RecallPolicy,
}

/// A stage handler as a script declared it (`sdk.stage`).
#[derive(Clone, Debug, PartialEq)]
pub struct StageDecl {
    /// The stage's wire name (`before_output`, …).
    pub stage: String,
    /// Higher runs earlier.
    pub priority: i32,
    /// `global` or `own_tools`.
    pub scope: String,
}

/// An output channel as a script declared it (`sdk.channel`).
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelDecl {
    /// The channel's name.
    pub name: String,
    /// One line for the model and the user.
    pub description: String,
    /// What it can send (`text`, `image`, …).
    pub caps: Vec<String>,
}

/// Everything a script declared when it loaded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Declarations {
    /// Its tools.
    pub tools: Vec<ToolDecl>,
    /// Its stage handlers.
    pub stages: Vec<StageDecl>,
    /// Its output channels.
    pub channels: Vec<ChannelDecl>,
}

/// What a handler serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Tool,
    Stage,
    Channel,
}

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Stage => "stage",
            Kind::Channel => "output channel",
        }
    }
}

/// A reverse call into the kernel (method, params), already bound to the plugin and its gate.
pub(crate) type Reverse = Arc<dyn Fn(&str, Json) -> Result<Json, HandlerError> + Send + Sync>;

/// Reverse calls one handler call (or the load) may make: a loop of them would otherwise hold
/// the kernel's services for the whole time limit, since the hook does not run while one waits.
pub const MAX_REVERSE_CALLS: u32 = 64;

pub(crate) struct Script {
    limits: AdapterLimits,
    meter: Arc<Meter>,
    handlers: HashMap<(Kind, String), Function>,
    /// Reverse calls made by the running call.
    calls: Rc<Cell<u32>>,
    // Declared last so the handlers above are released before the state closes.
    lua: Lua,
}

#[derive(Default)]
struct Collected {
    decls: Declarations,
    handlers: Vec<((Kind, String), Function)>,
}

type Declared = Rc<RefCell<Collected>>;

fn json_of(lua: &Lua, v: Value) -> mlua::Result<Json> {
    match v {
        Value::Nil => Ok(Json::Null),
        v => lua.from_value(v),
    }
}

impl Collected {
    /// Records `handler` under (`kind`, `name`), refusing a second one.
    fn add(&mut self, kind: Kind, name: &str, handler: Function) -> mlua::Result<()> {
        let key = (kind, name.to_owned());
        if self.handlers.iter().any(|(k, _)| *k == key) {
            return Err(bad_declaration(format!(
                "{} {name}: declared twice",
                kind.as_str()
            )));
        }
        self.handlers.push((key, handler));
        Ok(())
    }
}

fn handler_of(t: &Table, what: &str, name: &str) -> mlua::Result<Function> {
    t.get("handler")
        .map_err(|_| bad_declaration(format!("{what} {name}: `handler` must be a function")))
}

/// The `sdk` table: `sdk.tool{name, description, parameters, handler}`,
/// `sdk.stage{stage, priority, scope, handler}`, `sdk.channel{name, description, caps,
/// handler}`, `sdk.call(method, params)` and its helpers.
fn install_sdk(
    lua: &Lua,
    declared: &Declared,
    reverse: Option<Reverse>,
    calls: &Rc<Cell<u32>>,
) -> mlua::Result<()> {
    let sdk = lua.create_table()?;
    let into = Rc::clone(declared);
    let tool = lua.create_function(move |lua, t: Table| {
        let name: String = t.get("name")?;
        let description: Option<String> = t.get("description")?;
        let parameters = match t.get::<Value>("parameters")? {
            Value::Nil => serde_json::json!({"type": "object", "properties": {}}),
            v => json_of(lua, v)?,
        };
        let handler = handler_of(&t, "sdk.tool", &name)?;
        let context_policy = policy(&t, &name, "context_policy", "\"prune\" or \"none\"")?;
        let recall_policy = policy(&t, &name, "recall_policy", "\"auto\" or \"none\"")?;
        let mut into = into.borrow_mut();
        into.add(Kind::Tool, &name, handler)?;
        into.decls.tools.push(ToolDecl {
            name,
            description: description.unwrap_or_default(),
            parameters,
            context_policy,
            recall_policy,
        });
        Ok(())
    })?;
    sdk.raw_set("tool", tool)?;
    let into = Rc::clone(declared);
    let stage = lua.create_function(move |_, t: Table| {
        let stage: String = t.get("stage")?;
        if Stage::from_name(&stage).is_none() {
            return Err(bad_declaration(format!(
                "sdk.stage: no stage named {stage:?} (stages: {})",
                Stage::ALL.map(Stage::as_str).join(", ")
            )));
        }
        let handler = handler_of(&t, "sdk.stage", &stage)?;
        let priority: Option<i32> = t.get("priority")?;
        let scope: Option<String> = t.get("scope")?;
        let mut into = into.borrow_mut();
        into.add(Kind::Stage, &stage, handler)?;
        into.decls.stages.push(StageDecl {
            stage,
            priority: priority.unwrap_or(0),
            scope: scope.unwrap_or_else(|| "global".into()),
        });
        Ok(())
    })?;
    sdk.raw_set("stage", stage)?;
    let into = Rc::clone(declared);
    let channel = lua.create_function(move |_, t: Table| {
        let name: String = t.get("name")?;
        let handler = handler_of(&t, "sdk.channel", &name)?;
        let description: Option<String> = t.get("description")?;
        let caps: Option<Vec<String>> = t.get("caps")?;
        let mut into = into.borrow_mut();
        into.add(Kind::Channel, &name, handler)?;
        into.decls.channels.push(ChannelDecl {
            name,
            description: description.unwrap_or_default(),
            caps: caps.unwrap_or_else(|| vec!["text".into()]),
        });
        Ok(())
    })?;
    sdk.raw_set("channel", channel)?;
    install_calls(lua, &sdk, reverse, calls)?;
    lua.globals().raw_set("sdk", sdk)
}

/// `sdk.call(method, params)` and the helpers over it; each is one reverse call through the
/// plugin's capability gate, counted against [`MAX_REVERSE_CALLS`].
fn install_calls(
    lua: &Lua,
    sdk: &Table,
    reverse: Option<Reverse>,
    calls: &Rc<Cell<u32>>,
) -> mlua::Result<()> {
    let calls = Rc::clone(calls);
    let call = lua.create_function(move |lua, (method, params): (String, Value)| {
        let Some(reverse) = &reverse else {
            return Err(mlua::Error::runtime(format!(
                "sdk.call {method}: this plugin has no kernel to call"
            )));
        };
        let made = calls.get() + 1;
        if made > MAX_REVERSE_CALLS {
            return Err(mlua::Error::runtime(format!(
                "sdk.call {method}: more than {MAX_REVERSE_CALLS} reverse calls in one call"
            )));
        }
        calls.set(made);
        let params = json_of(lua, params)?;
        let params = if params.is_null() {
            serde_json::json!({})
        } else {
            params
        };
        // The script reads the typed error as its message (a Lua error is a value, not a type).
        let answer = reverse(&method, params).map_err(|e| mlua::Error::runtime(e.to_string()))?;
        lua.to_value(&answer)
    })?;
    sdk.raw_set("call", call)?;
    // Thin helpers, written in Lua over sdk.call so they cannot bypass it.
    lua.load(
        r#"
        local sdk = ...
        function sdk.memory_search(query, top_k)
          return sdk.call("memory.search", { query = query, top_k = top_k }).items
        end
        function sdk.memory_recall(query, top_k)
          return sdk.call("memory.recall", { query = query, top_k = top_k }).text
        end
        function sdk.settings_get(key)
          return sdk.call("settings.get", { key = key }).value
        end
        function sdk.settings_set(key, value)
          sdk.call("settings.set", { key = key, value = value })
        end
        "#,
    )
    .set_name("=sdk")
    .call::<()>(sdk.clone())
}

/// What a load or call was doing when it failed.
#[derive(Clone, Copy)]
enum Step {
    /// Running the script's code.
    Run,
    /// Turning JSON into Lua values or back.
    Convert,
}

/// Why a load or call failed: the limit it hit, else what the error says.
fn failure(e: &mlua::Error, trip: Option<Trip>, limits: &AdapterLimits, step: Step) -> ScriptError {
    match trip {
        Some(Trip::Instructions) => ScriptError::Instructions {
            limit: limits.instructions,
        },
        Some(Trip::Time) => ScriptError::Time { limit: limits.wall },
        None if is_memory(e) => ScriptError::Memory {
            limit: limits.memory_bytes,
        },
        None => {
            if let Some(BadDeclaration(what)) = e.downcast_ref::<BadDeclaration>() {
                return ScriptError::Declaration { what: what.clone() };
            }
            if let mlua::Error::SyntaxError { message, .. } = root(e) {
                let message = message
                    .split("\nstack traceback:")
                    .next()
                    .unwrap_or_default();
                return ScriptError::Syntax {
                    message: message.trim().to_owned(),
                };
            }
            let message = describe(e);
            match step {
                Step::Run => ScriptError::Runtime { message },
                Step::Convert => ScriptError::Json { message },
            }
        }
    }
}

/// The error a Rust callback's failure wraps.
fn root(e: &mlua::Error) -> &mlua::Error {
    match e {
        mlua::Error::CallbackError { cause, .. } => root(cause),
        other => other,
    }
}

impl Script {
    /// Runs `source` (named `file`) and reads what it declared; `reverse` serves `sdk.call`.
    pub(crate) fn load(
        name: &str,
        file: &str,
        source: &str,
        limits: AdapterLimits,
        reverse: Option<Reverse>,
    ) -> Result<(Script, Declarations), ScriptError> {
        let setup = |e: mlua::Error| ScriptError::Setup {
            message: describe(&e),
        };
        let meter = Arc::new(Meter::new());
        let lua = sandbox::new_state(name, &limits, &meter).map_err(setup)?;
        let declared: Declared = Rc::default();
        let calls = Rc::new(Cell::new(0));
        install_sdk(&lua, &declared, reverse, &calls).map_err(setup)?;
        meter.begin(&limits);
        let ran = lua
            .load(source)
            .set_name(format!("@{file}"))
            .set_mode(ChunkMode::Text)
            .exec();
        let trip = meter.end();
        if let Err(e) = &ran {
            return Err(failure(e, trip, &limits, Step::Run));
        }
        if let Some(trip) = trip {
            let e = mlua::Error::runtime("");
            return Err(failure(&e, Some(trip), &limits, Step::Run));
        }
        let Collected { decls, handlers } = declared.take();
        Ok((
            Script {
                limits,
                meter,
                handlers: handlers.into_iter().collect(),
                calls,
                lua,
            },
            decls,
        ))
    }

    /// Runs the `kind` handler `name` with `args` and the call's `ctx` under the call budget.
    pub(crate) fn call(
        &self,
        kind: Kind,
        name: &str,
        args: &Json,
        ctx: &Json,
    ) -> Result<Json, ScriptError> {
        let handler =
            self.handlers
                .get(&(kind, name.to_owned()))
                .ok_or_else(|| ScriptError::NoHandler {
                    kind: kind.as_str(),
                    name: name.to_owned(),
                })?;
        self.calls.set(0);
        self.meter.begin(&self.limits);
        let convert = |e| (Step::Convert, e);
        let result = (|| {
            let args = self.lua.to_value(args).map_err(convert)?;
            let ctx = self.lua.to_value(ctx).map_err(convert)?;
            let out: Value = handler.call((args, ctx)).map_err(|e| (Step::Run, e))?;
            json_of(&self.lua, out).map_err(convert)
        })();
        let trip = self.meter.end();
        match (result, trip) {
            (Ok(v), None) => Ok(v),
            (Ok(_), Some(trip)) => Err(failure(
                &mlua::Error::runtime(""),
                Some(trip),
                &self.limits,
                Step::Run,
            )),
            (Err((step, e)), trip) => Err(failure(&e, trip, &self.limits, step)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(source: &str) -> Result<(Script, Declarations), ScriptError> {
        let limits = AdapterLimits {
            instructions: 1_000_000,
            wall: Duration::from_secs(5),
            ..AdapterLimits::default()
        };
        Script::load("t", "main.lua", source, limits, None)
    }

    #[test]
    fn a_load_failure_says_which_kind_it_is() {
        let e = load("this is not lua").err().expect("does not parse");
        assert!(matches!(e, ScriptError::Syntax { .. }), "{e:?}");
        assert!(e.to_string().starts_with("syntax error: "), "{e}");
        assert!(e.to_string().contains("main.lua"), "{e}");

        let e = load("error('no thanks')").err().expect("raises");
        assert!(
            matches!(&e, ScriptError::Runtime { message } if message.contains("no thanks")),
            "{e:?}"
        );

        let e = load("sdk.tool{ name = 'x' }").err().expect("no handler");
        assert!(
            matches!(&e, ScriptError::Declaration { what } if what == "sdk.tool x: `handler` must be a function"),
            "{e:?}"
        );

        let e = load("sdk.stage{ stage = 'nowhere', handler = function() end }")
            .err()
            .expect("no such stage");
        assert!(matches!(e, ScriptError::Declaration { .. }), "{e:?}");

        let e = load("while true do end").err().expect("never ends");
        assert!(
            matches!(
                e,
                ScriptError::Instructions { limit: 1_000_000 } | ScriptError::Time { .. }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn a_tools_memory_policies_are_declared_by_name_and_checked() {
        let (_, decls) = load(
            "sdk.tool{ name = 'a', recall_policy = 'auto', context_policy = 'prune', \
               handler = function() end }\n\
             sdk.tool{ name = 'b', handler = function() end }",
        )
        .expect("loads");
        let [a, b] = &decls.tools[..] else {
            panic!("two tools: {:?}", decls.tools);
        };
        assert_eq!(
            (a.recall_policy, a.context_policy),
            (RecallPolicy::Auto, ContextPolicy::Prune)
        );
        assert_eq!(
            (b.recall_policy, b.context_policy),
            (RecallPolicy::None, ContextPolicy::None)
        );
        let e =
            load("sdk.tool{ name = 'x', recall_policy = 'sometimes', handler = function() end }")
                .err()
                .expect("no such policy");
        assert!(
            matches!(&e, ScriptError::Declaration { what }
                if what == "sdk.tool x: recall_policy must be \"auto\" or \"none\", not \"sometimes\""),
            "{e:?}"
        );
    }

    #[test]
    fn a_call_failure_says_which_kind_it_is() {
        let (script, _) = load(
            "sdk.tool{ name = 'boom', handler = function() error('bang') end }\n\
             sdk.tool{ name = 'fn', handler = function() return print end }",
        )
        .expect("loads");
        let call = |name: &str| script.call(Kind::Tool, name, &Json::Null, &Json::Null);
        assert!(matches!(call("boom"), Err(ScriptError::Runtime { .. })));
        assert!(matches!(call("fn"), Err(ScriptError::Json { .. })));
        assert_eq!(
            call("missing"),
            Err(ScriptError::NoHandler {
                kind: "tool",
                name: "missing".into()
            })
        );
    }
}
