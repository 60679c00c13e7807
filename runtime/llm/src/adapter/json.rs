//! The `json` global of adapter scripts, converted by hand over `serde_json::Value` so the
//! array/object rule is exact:
//!
//! * a table whose keys are all positive integers (not sparser than half full) is an array,
//!   anything else an object, so an **empty table encodes as `{}`**;
//! * tables made by `json.decode` from a JSON array, or marked with `json.array(t)`, stay arrays
//!   even when empty, so `"required": []` survives a decode/encode round trip;
//! * JSON `null` decodes to the sentinel `json.null` (a null light userdata), so arrays keep
//!   their length and shape; `json.null` encodes back to `null`;
//! * integers stay Lua integers, other numbers are Lua floats; a float with no fraction (and
//!   exactly representable) encodes as an integer, because typed servers reject `4096.0` where
//!   they want a count;
//! * `json.encode` returns `"null"` when a value cannot be encoded (a function, NaN, a cycle),
//!   and raises an error when its text would not fit in what is left of the state's memory
//!   limit; `json.decode` returns `nil` when its input is not JSON.

use super::json_encode::{EncodeError, budget, encode_bounded};
use super::json_shape::{ARRAY_MT_KEY, Shape, array_mt, classify, is_array_mt};
use mlua::{Lua, Table, Value as LuaValue};
use serde_json::Value;

/// Creates the `json` table (`encode`, `decode`, `null`, `array`, `is_array`) and sets it as a global.
/// `json.encode`'s text is capped at what is left of `memory_limit` (see `json_encode`).
pub(crate) fn install(lua: &Lua, memory_limit: usize) -> mlua::Result<()> {
    let mark = lua.create_table()?;
    mark.raw_set("__name", "json.array")?;
    lua.set_named_registry_value(ARRAY_MT_KEY, mark)?;

    let json = lua.create_table()?;
    json.raw_set(
        "encode",
        lua.create_function(move |lua, value: LuaValue| {
            match encode_bounded(lua, &value, budget(lua, memory_limit)) {
                Ok(text) => Ok(text),
                // Loud, unlike an unencodable value: the script asked for more than it may hold.
                Err(e @ EncodeError::TooLarge { .. }) => {
                    Err(mlua::Error::runtime(format!("json.encode: {e}")))
                }
                Err(EncodeError::Invalid(reason)) => {
                    tracing::debug!("[lua/json] encode failed: {reason}");
                    Ok("null".to_string())
                }
            }
        })?,
    )?;
    json.raw_set(
        "decode",
        lua.create_function(|lua, text: LuaValue| {
            let LuaValue::String(text) = text else {
                return Ok(LuaValue::Nil);
            };
            match serde_json::from_slice::<Value>(&text.as_bytes()) {
                Ok(v) => to_lua(lua, &v),
                Err(_) => Ok(LuaValue::Nil),
            }
        })?,
    )?;
    json.raw_set("null", LuaValue::NULL)?;
    json.raw_set(
        "array",
        lua.create_function(|lua, t: Option<Table>| {
            let t = match t {
                Some(t) => t,
                None => lua.create_table()?,
            };
            if t.metatable().is_some_and(|mt| !is_array_mt(lua, &mt)) {
                return Err(mlua::Error::runtime(
                    "json.array: table already has a metatable",
                ));
            }
            t.set_metatable(Some(array_mt(lua)?))?;
            Ok(t)
        })?,
    )?;
    json.raw_set(
        "is_array",
        lua.create_function(|lua, v: LuaValue| {
            Ok(match v {
                LuaValue::Table(t) => matches!(classify(lua, &t), Ok(Shape::Array(_))),
                _ => false,
            })
        })?,
    )?;
    lua.globals().raw_set("json", json)
}

/// Converts JSON to Lua: arrays carry the array mark, `null` is `json.null`.
pub(crate) fn to_lua(lua: &Lua, value: &Value) -> mlua::Result<LuaValue> {
    let mark = array_mt(lua)?;
    decode(lua, value, &mark)
}

fn decode(lua: &Lua, value: &Value, mark: &Table) -> mlua::Result<LuaValue> {
    Ok(match value {
        Value::Null => LuaValue::NULL,
        Value::Bool(b) => LuaValue::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => LuaValue::Integer(i),
            None => LuaValue::Number(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => LuaValue::String(lua.create_string(s)?),
        Value::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, decode(lua, item, mark)?)?;
            }
            t.set_metatable(Some(mark.clone()))?;
            LuaValue::Table(t)
        }
        Value::Object(map) => {
            let t = lua.create_table_with_capacity(0, map.len())?;
            for (k, v) in map {
                t.raw_set(k.as_str(), decode(lua, v, mark)?)?;
            }
            LuaValue::Table(t)
        }
    })
}
