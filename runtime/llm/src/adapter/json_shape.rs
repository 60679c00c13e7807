//! What a Lua table is as JSON, for both directions of the `json` global: the array mark that
//! `json.decode` and `json.array` put on arrays, the array/object rule, and numbers.

use mlua::{Lua, Table, Value as LuaValue};
use serde_json::Number;

/// Registry key of the metatable that marks a table as a JSON array.
pub(super) const ARRAY_MT_KEY: &str = "hearth.json.array";
/// Nesting limit for encoding; deeper means a cycle or an abusive script.
pub(super) const MAX_DEPTH: usize = 128;
/// Largest integer an f64 holds exactly (2^53).
const EXACT_F64_INT: f64 = 9_007_199_254_740_992.0;

pub(super) fn array_mt(lua: &Lua) -> mlua::Result<Table> {
    lua.named_registry_value(ARRAY_MT_KEY)
}

pub(super) fn is_array_mt(lua: &Lua, mt: &Table) -> bool {
    array_mt(lua).is_ok_and(|a| a.to_pointer() == mt.to_pointer())
}

/// A float as a JSON number: integral ones as integers; NaN and infinities have none.
pub(super) fn float_number(f: f64) -> Result<Number, String> {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < EXACT_F64_INT {
        // Exact: |f| < 2^53 and integral.
        return Ok(Number::from(f as i64));
    }
    Number::from_f64(f).ok_or_else(|| format!("cannot encode {f}"))
}

/// What a table encodes as.
pub(super) enum Shape {
    /// Highest index; every key is an integer in 1..=n.
    Array(usize),
    Object,
}

pub(super) fn classify(lua: &Lua, t: &Table) -> Result<Shape, String> {
    let marked = t.metatable().is_some_and(|mt| is_array_mt(lua, &mt));
    let mut count = 0usize;
    let mut max = 0i64;
    for pair in t.pairs::<LuaValue, LuaValue>() {
        let (key, _) = pair.map_err(|e| e.to_string())?;
        match key {
            LuaValue::Integer(i) if i >= 1 => {
                count += 1;
                max = max.max(i);
            }
            _ => return Ok(Shape::Object),
        }
    }
    let max = usize::try_from(max).map_err(|_| "array index out of range".to_string())?;
    let array = if count == 0 {
        marked
    } else {
        max <= count.saturating_mul(2)
    };
    Ok(if array {
        Shape::Array(max)
    } else {
        Shape::Object
    })
}
