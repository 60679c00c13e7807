//! One plugin script in its own sandboxed state: it runs its chunk once, collecting the tools
//! `sdk.tool` declares, then runs a tool's handler per call under the call budget. Not `Send`
//! (a Lua state belongs to one thread); [`crate::LuaPlugin`] owns it on a thread of its own.

use hearth_llm::adapter::AdapterLimits;
use hearth_llm::adapter::sandbox::{self, Meter, Trip, describe, is_memory};
use mlua::chunk::ChunkMode;
use mlua::{Function, Lua, LuaSerdeExt, Table, Value};
use serde_json::Value as Json;
use std::cell::RefCell;
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

pub(crate) struct Script {
    limits: AdapterLimits,
    meter: Arc<Meter>,
    handlers: HashMap<String, Function>,
    // Declared last so the handlers above are released before the state closes.
    lua: Lua,
}

type Declared = Rc<RefCell<Vec<(ToolDecl, Function)>>>;

fn json_of(lua: &Lua, v: Value) -> mlua::Result<Json> {
    match v {
        Value::Nil => Ok(Json::Null),
        v => lua.from_value(v),
    }
}

/// The `sdk` table: `sdk.tool{name, description, parameters, handler}`.
fn install_sdk(lua: &Lua, declared: &Declared) -> mlua::Result<()> {
    let sdk = lua.create_table()?;
    let into = Rc::clone(declared);
    let tool = lua.create_function(move |lua, t: Table| {
        let name: String = t.get("name")?;
        let description: Option<String> = t.get("description")?;
        let parameters = match t.get::<Value>("parameters")? {
            Value::Nil => serde_json::json!({"type": "object", "properties": {}}),
            v => json_of(lua, v)?,
        };
        let handler: Function = t.get("handler").map_err(|_| {
            mlua::Error::runtime(format!("sdk.tool {name}: `handler` must be a function"))
        })?;
        let mut into = into.borrow_mut();
        if into.iter().any(|(d, _)| d.name == name) {
            return Err(mlua::Error::runtime(format!(
                "sdk.tool {name}: declared twice"
            )));
        }
        into.push((
            ToolDecl {
                name,
                description: description.unwrap_or_default(),
                parameters,
            },
            handler,
        ));
        Ok(())
    })?;
    sdk.raw_set("tool", tool)?;
    lua.globals().raw_set("sdk", sdk)
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
    /// Runs `source` (named `file`) and reads the tools it declared.
    pub(crate) fn load(
        name: &str,
        file: &str,
        source: &str,
        limits: AdapterLimits,
    ) -> Result<(Script, Vec<ToolDecl>), String> {
        let meter = Arc::new(Meter::new());
        let lua = sandbox::new_state(name, &limits, &meter).map_err(|e| describe(&e))?;
        let declared: Declared = Rc::default();
        install_sdk(&lua, &declared).map_err(|e| describe(&e))?;
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
        let declared = declared.take();
        let decls = declared.iter().map(|(d, _)| d.clone()).collect();
        let handlers = declared.into_iter().map(|(d, f)| (d.name, f)).collect();
        Ok((
            Script {
                limits,
                meter,
                handlers,
                lua,
            },
            decls,
        ))
    }

    /// Runs tool `tool`'s handler with `args` and the call's `ctx` under the call budget.
    pub(crate) fn call(&self, tool: &str, args: &Json, ctx: &Json) -> Result<Json, String> {
        let handler = self
            .handlers
            .get(tool)
            .ok_or_else(|| format!("the script declares no tool {tool}"))?;
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
