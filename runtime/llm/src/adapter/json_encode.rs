//! Lua values written straight to JSON text under a byte budget.
//!
//! The text lives on the Rust heap, outside the Lua state's memory limit, and a table that
//! refers to one subtable many times expands in JSON far beyond its own size (ten levels of
//! `{t, t}` are a thousand copies). So the output is capped at what is left of the state's
//! memory limit, the size it would need as a Lua string anyway, and encoding stops with an
//! error the moment it would pass that. No intermediate JSON tree is built.
//!
//! Output matches `serde_json`'s: object keys sorted, integral floats as integers, strings
//! escaped the same way.

use super::json_shape::{MAX_DEPTH, Shape, classify, float_number};
use mlua::{Lua, Table, Value as LuaValue};

/// Why a value has no JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EncodeError {
    /// It holds something JSON cannot (a function, NaN, a cycle).
    Invalid(String),
    /// The text would be longer than `limit` bytes.
    TooLarge {
        /// The budget in bytes.
        limit: usize,
    },
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncodeError::Invalid(reason) => f.write_str(reason),
            EncodeError::TooLarge { limit } => write!(
                f,
                "JSON text larger than the {limit} bytes left of the adapter's memory limit"
            ),
        }
    }
}

/// The budget for one encode: what the state may still allocate under `memory_limit`.
pub(crate) fn budget(lua: &Lua, memory_limit: usize) -> usize {
    memory_limit.saturating_sub(lua.used_memory())
}

/// `value` as JSON text of at most `limit` bytes.
pub(crate) fn encode_bounded(
    lua: &Lua,
    value: &LuaValue,
    limit: usize,
) -> Result<String, EncodeError> {
    let mut w = Writer {
        out: Vec::new(),
        limit,
    };
    w.value(lua, value, 0)?;
    // Only `str` data and ASCII were written.
    String::from_utf8(w.out).map_err(|e| EncodeError::Invalid(e.to_string()))
}

struct Writer {
    out: Vec<u8>,
    limit: usize,
}

impl Writer {
    fn push(&mut self, bytes: &[u8]) -> Result<(), EncodeError> {
        if self.out.len() + bytes.len() > self.limit {
            return Err(EncodeError::TooLarge { limit: self.limit });
        }
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    fn value(&mut self, lua: &Lua, value: &LuaValue, depth: usize) -> Result<(), EncodeError> {
        match value {
            LuaValue::Nil => self.push(b"null"),
            LuaValue::Boolean(b) => self.push(if *b { b"true" } else { b"false" }),
            LuaValue::Integer(i) => self.push(i.to_string().as_bytes()),
            LuaValue::Number(f) => {
                let n = float_number(*f).map_err(EncodeError::Invalid)?;
                self.push(n.to_string().as_bytes())
            }
            LuaValue::String(s) => self.string(&s.to_string_lossy()),
            LuaValue::LightUserData(ud) if ud.0.is_null() => self.push(b"null"),
            LuaValue::Table(t) => self.table(lua, t, depth),
            other => Err(EncodeError::Invalid(format!(
                "cannot encode a {}",
                other.type_name()
            ))),
        }
    }

    fn table(&mut self, lua: &Lua, t: &Table, depth: usize) -> Result<(), EncodeError> {
        if depth >= MAX_DEPTH {
            return Err(EncodeError::Invalid(
                "tables nested too deeply (a cycle?)".to_string(),
            ));
        }
        match classify(lua, t).map_err(EncodeError::Invalid)? {
            Shape::Array(len) => {
                self.push(b"[")?;
                for i in 1..=len {
                    if i > 1 {
                        self.push(b",")?;
                    }
                    let v: LuaValue = t
                        .raw_get(i)
                        .map_err(|e| EncodeError::Invalid(e.to_string()))?;
                    self.value(lua, &v, depth + 1)?;
                }
                self.push(b"]")
            }
            Shape::Object => {
                let mut entries = Vec::new();
                for pair in t.pairs::<LuaValue, LuaValue>() {
                    let (k, v) = pair.map_err(|e| EncodeError::Invalid(e.to_string()))?;
                    let key = match &k {
                        LuaValue::String(s) => s.to_string_lossy(),
                        LuaValue::Integer(i) => i.to_string(),
                        LuaValue::Number(f) => f.to_string(),
                        other => {
                            return Err(EncodeError::Invalid(format!(
                                "cannot encode a {} key",
                                other.type_name()
                            )));
                        }
                    };
                    entries.push((key, v));
                }
                // Stable, so of two keys that read the same (`1` and `"1"`) the later one wins,
                // as in a map filled in iteration order.
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                self.push(b"{")?;
                let mut first = true;
                for (i, (key, v)) in entries.iter().enumerate() {
                    if entries.get(i + 1).is_some_and(|next| next.0 == *key) {
                        continue;
                    }
                    if !first {
                        self.push(b",")?;
                    }
                    first = false;
                    self.string(key)?;
                    self.push(b":")?;
                    self.value(lua, v, depth + 1)?;
                }
                self.push(b"}")
            }
        }
    }

    /// A JSON string, escaped as `serde_json` does: quote, backslash and control characters.
    fn string(&mut self, s: &str) -> Result<(), EncodeError> {
        self.push(b"\"")?;
        let bytes = s.as_bytes();
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let escape: &[u8] = match b {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0x08 => b"\\b",
                0x0c => b"\\f",
                0..0x20 => b"",
                _ => continue,
            };
            self.push(&bytes[start..i])?;
            if escape.is_empty() {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                self.push(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xf)],
                ])?;
            } else {
                self.push(escape)?;
            }
            start = i + 1;
        }
        self.push(&bytes[start..])?;
        self.push(b"\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn eval(lua: &Lua, code: &str) -> LuaValue {
        lua.load(code).eval().expect("lua")
    }

    #[test]
    fn a_shared_subtable_bomb_stops_at_the_budget() {
        let lua = Lua::new();
        let bomb = eval(
            &lua,
            "local t = {string.rep('x', 1000)} for i = 1, 30 do t = {t, t} end return t",
        );
        let err = encode_bounded(&lua, &bomb, 1 << 20).expect_err("over budget");
        assert_eq!(err, EncodeError::TooLarge { limit: 1 << 20 });
        let small = eval(
            &lua,
            "return {b = {1, 2.5, 3.0}, a = 'q\"\\n\\1', [1.5] = true}",
        );
        assert_eq!(
            encode_bounded(&lua, &small, 1 << 20).expect("fits"),
            r#"{"1.5":true,"a":"q\"\n\u0001","b":[1,2.5,3]}"#
        );
        assert_eq!(
            encode_bounded(&lua, &small, 10),
            Err(EncodeError::TooLarge { limit: 10 })
        );
    }

    proptest! {
        #[test]
        fn strings_are_escaped_exactly_as_serde_json_does(s in "\\PC*|[\\x00-\\x1f\"\\\\]{0,8}") {
            let lua = Lua::new();
            let value = LuaValue::String(lua.create_string(&s).expect("string"));
            let ours = encode_bounded(&lua, &value, usize::MAX).expect("encodes");
            prop_assert_eq!(ours, serde_json::to_string(&s).expect("serde"));
        }
    }
}
