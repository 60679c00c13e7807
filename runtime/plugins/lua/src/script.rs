//! One plugin script in its own sandboxed state: it runs its chunk once, collecting the tools,
//! stage handlers and output channels the `sdk` table declares, then runs one handler per call
//! under the call budget; `sdk.call` reaches the kernel through the plugin's capability gate. Not `Send`
//! (a Lua state belongs to one thread); [`crate::LuaPlugin`] owns it on a thread of its own.

use hearth_llm::adapter::AdapterLimits;
use hearth_llm::adapter::sandbox::{self, Meter, Trip, describe, is_memory};
use hearth_rpc::HandlerError;
use hearth_stages::Stage;
use mlua::chunk::ChunkMode;
use mlua::{Function, Lua, LuaSerdeExt, Table, Value};
use serde_json::Value as Json;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// A tool as a script declared it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDecl {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON schema of its arguments.
    pub parameters: Json,
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
            return Err(mlua::Error::runtime(format!(
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
        .map_err(|_| mlua::Error::runtime(format!("{what} {name}: `handler` must be a function")))
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
        let mut into = into.borrow_mut();
        into.add(Kind::Tool, &name, handler)?;
        into.decls.tools.push(ToolDecl {
            name,
            description: description.unwrap_or_default(),
            parameters,
        });
        Ok(())
    })?;
    sdk.raw_set("tool", tool)?;
    let into = Rc::clone(declared);
    let stage = lua.create_function(move |_, t: Table| {
        let stage: String = t.get("stage")?;
        if Stage::from_name(&stage).is_none() {
            return Err(mlua::Error::runtime(format!(
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

/// Why a call failed, in words for the model and the log.
fn failure(e: &mlua::Error, trip: Option<Trip>, limits: &AdapterLimits) -> String {
    match trip {
        Some(Trip::Instructions) => format!(
            "exceeded its instruction budget ({} instructions)",
            limits.instructions
        ),
        Some(Trip::Time) => format!("exceeded its time limit ({:?})", limits.wall),
        None if is_memory(e) => format!("ran out of memory (limit {} bytes)", limits.memory_bytes),
        None => describe(e),
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
    ) -> Result<(Script, Declarations), String> {
        let meter = Arc::new(Meter::new());
        let lua = sandbox::new_state(name, &limits, &meter).map_err(|e| describe(&e))?;
        let declared: Declared = Rc::default();
        let calls = Rc::new(Cell::new(0));
        install_sdk(&lua, &declared, reverse, &calls).map_err(|e| describe(&e))?;
        meter.begin(&limits);
        let ran = lua
            .load(source)
            .set_name(format!("@{file}"))
            .set_mode(ChunkMode::Text)
            .exec();
        let trip = meter.end();
        if let Err(e) = &ran {
            return Err(failure(e, trip, &limits));
        }
        if let Some(trip) = trip {
            let e = mlua::Error::runtime("");
            return Err(failure(&e, Some(trip), &limits));
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
    ) -> Result<Json, String> {
        let handler = self
            .handlers
            .get(&(kind, name.to_owned()))
            .ok_or_else(|| format!("the script declares no {} {name}", kind.as_str()))?;
        self.calls.set(0);
        self.meter.begin(&self.limits);
        let result = (|| {
            let args = self.lua.to_value(args)?;
            let ctx = self.lua.to_value(ctx)?;
            let out: Value = handler.call((args, ctx))?;
            json_of(&self.lua, out)
        })();
        let trip = self.meter.end();
        match (result, trip) {
            (Ok(v), None) => Ok(v),
            (Ok(_), Some(trip)) => {
                Err(failure(&mlua::Error::runtime(""), Some(trip), &self.limits))
            }
            (Err(e), trip) => Err(failure(&e, trip, &self.limits)),
        }
    }
}
