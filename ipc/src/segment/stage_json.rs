//! The stage context as handlers see it (a JSON object: the kernel's `StageContext` serialised)
//! mapped onto the area's fields, so the kernel and a plugin agree byte for byte on what each
//! field holds: text fields as UTF-8, the list fields as compact JSON, an absent (or `null`)
//! value as unset. `ipc/DESIGN.md` §2.2 names the keys.

use serde_json::{Map, Value};

use super::stage_context::{StageContext, StageField};
use crate::{FieldError, IpcError};

/// The name a plugin gives in `dirty_fields` when it changed the NoMemory flag (a header bit,
/// not a field: it has no dirty bit of its own).
pub const NO_MEMORY: &str = "NoMemory";

/// The JSON key of the NoMemory flag.
const NO_MEMORY_KEY: &str = "no_memory";

impl StageField {
    /// The field named `name` (its [`name`](Self::name), e.g. `FinalText`).
    pub fn from_name(name: &str) -> Option<StageField> {
        StageField::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Where the field sits in the context's JSON object: a key of `extra` (`true`) or a
    /// top-level key, and the key.
    pub const fn json_key(self) -> (bool, &'static str) {
        use StageField::*;
        match self {
            RawMessage => (false, "raw_message"),
            UserId => (false, "user_id"),
            GroupId => (false, "group_id"),
            LlmText => (false, "llm_text"),
            ReasoningContent => (false, "reasoning_content"),
            FinalText => (false, "final_text"),
            Response => (false, "response"),
            Phase => (false, "phase"),
            ContextMsgs => (false, "context_msgs"),
            ToolCalls => (false, "tool_calls"),
            ToolResults => (false, "tool_results"),
            Memory => (false, "memory"),
            TokenUsage => (false, "token_usage"),
            Errors => (false, "errors"),
            MediaBlocks => (true, "media_blocks"),
            MediaType => (true, "media_type"),
            InputSource => (true, "input_source"),
            OutputChannel => (true, "output_channel"),
        }
    }

    /// Whether the value is stored as JSON (the lists and maps) rather than as text.
    pub const fn is_json(self) -> bool {
        use StageField::*;
        matches!(
            self,
            ContextMsgs | ToolCalls | ToolResults | Memory | TokenUsage | Errors | MediaBlocks
        )
    }

    /// The field's value in `object` (`None`: absent).
    pub fn get(self, object: &Value) -> Option<&Value> {
        match self.json_key() {
            (false, key) => object.get(key),
            (true, key) => object.get("extra")?.get(key),
        }
    }

    /// Sets the field in `object` (`None` removes it, so it takes its default).
    pub fn set(self, object: &mut Value, value: Option<Value>) {
        let Value::Object(map) = object else {
            *object = Value::Object(Map::new());
            return self.set(object, value);
        };
        let (in_extra, key) = self.json_key();
        let map = if in_extra {
            let extra = map
                .entry("extra")
                .or_insert_with(|| Value::Object(Map::new()));
            if !extra.is_object() {
                *extra = Value::Object(Map::new());
            }
            extra.as_object_mut().expect("made an object above")
        } else {
            map
        };
        match value {
            Some(v) => {
                map.insert(key.to_owned(), v);
            }
            None => {
                map.remove(key);
            }
        }
    }

    /// The bytes the area holds for this field of `object` (`None`: unset).
    ///
    /// # Errors
    /// [`IpcError::FieldValue`] when a text field holds something other than a string.
    pub fn encode(self, object: &Value) -> Result<Option<Vec<u8>>, IpcError> {
        match self.get(object) {
            None | Some(Value::Null) => Ok(None),
            Some(v) if self.is_json() => Ok(Some(
                serde_json::to_vec(v).expect("a JSON value always serialises"),
            )),
            Some(Value::String(s)) => Ok(Some(s.clone().into_bytes())),
            Some(other) => Err(IpcError::FieldValue {
                field: self.name(),
                reason: format!("a text field, but the context holds {other}"),
            }),
        }
    }

    /// The JSON value of the area's `bytes` for this field.
    ///
    /// # Errors
    /// [`IpcError::FieldValue`] when the bytes are not UTF-8 (text) or not JSON (lists).
    pub fn decode(self, bytes: &[u8]) -> Result<Value, IpcError> {
        let bad = |reason: String| IpcError::FieldValue {
            field: self.name(),
            reason,
        };
        if self.is_json() {
            serde_json::from_slice(bytes)
                .map_err(|e| bad(format!("its {} bytes are not JSON: {e}", bytes.len())))
        } else {
            std::str::from_utf8(bytes)
                .map(|s| Value::String(s.to_owned()))
                .map_err(|e| bad(format!("its {} bytes are not UTF-8: {e}", bytes.len())))
        }
    }
}

impl StageContext {
    /// The field's value decoded (`None`: unset).
    ///
    /// # Errors
    /// [`FieldError::Busy`] (no stable copy) or [`IpcError::FieldValue`] (undecodable bytes).
    pub fn read_json(
        &self,
        field: StageField,
        buf: &mut Vec<u8>,
    ) -> Result<Option<Value>, IpcError> {
        if !self.read(field, buf)? {
            return Ok(None);
        }
        field.decode(buf).map(Some)
    }

    /// Kernel side: loads every field of `object` (and its `no_memory` flag) into the area.
    /// Every value is encoded and checked against its capacity before the first write, so a
    /// context that does not fit is refused whole. A field left held by a writer that died is
    /// recovered and written.
    ///
    /// # Errors
    /// [`FieldError::TooLarge`] or [`IpcError::FieldValue`]: the caller sends the context
    /// inline instead.
    pub fn store_object(&self, object: &Value) -> Result<(), IpcError> {
        let mut values = Vec::with_capacity(StageField::COUNT);
        for field in StageField::ALL {
            let value = field.encode(object)?;
            self.check_fits(field, value.as_deref())?;
            values.push((field, value));
        }
        for (field, value) in values {
            if let Err(FieldError::Busy { .. }) = self.write(field, value.as_deref()) {
                self.recover(field);
                self.write(field, value.as_deref())?;
            }
        }
        self.set_no_memory(object[NO_MEMORY_KEY].as_bool().unwrap_or(false));
        Ok(())
    }

    /// Plugin side: every field as the context's JSON object, as the kernel stored it (an
    /// unset `response` is `null`, other unset fields are absent).
    ///
    /// # Errors
    /// As [`read_json`](Self::read_json).
    pub fn load_object(&self) -> Result<Value, IpcError> {
        let mut object = Value::Object(Map::new());
        let mut buf = Vec::new();
        for field in StageField::ALL {
            let value = self.read_json(field, &mut buf)?;
            let value = match (field, value) {
                (StageField::Response, None) => Some(Value::Null),
                (_, v) => v,
            };
            field.set(&mut object, value);
        }
        object[NO_MEMORY_KEY] = Value::Bool(self.no_memory());
        Ok(object)
    }

    /// Plugin side: writes the fields whose value differs between `before` (what
    /// [`load_object`](Self::load_object) gave) and `after` (the handler's edit), and the
    /// NoMemory flag if it changed; returns their names. Every changed value is checked against
    /// its capacity before the first write, so an edit that does not fit writes nothing.
    ///
    /// # Errors
    /// [`FieldError::TooLarge`], [`FieldError::Busy`] or [`IpcError::FieldValue`].
    pub fn write_changes(
        &self,
        before: &Value,
        after: &Value,
    ) -> Result<Vec<&'static str>, IpcError> {
        let mut changed = Vec::new();
        for field in StageField::ALL {
            let new = field.encode(after)?;
            if field.encode(before)? != new {
                self.check_fits(field, new.as_deref())?;
                changed.push((field, new));
            }
        }
        let mut names: Vec<&'static str> = Vec::with_capacity(changed.len() + 1);
        for (field, value) in changed {
            self.write(field, value.as_deref())?;
            names.push(field.name());
        }
        let flag = |v: &Value| v[NO_MEMORY_KEY].as_bool().unwrap_or(false);
        if flag(before) != flag(after) {
            self.set_no_memory(flag(after));
            names.push(NO_MEMORY);
        }
        Ok(names)
    }

    fn check_fits(&self, field: StageField, value: Option<&[u8]>) -> Result<(), FieldError> {
        let len = value.map_or(0, <[u8]>::len);
        let capacity = self.capacity(field);
        if len > capacity {
            return Err(FieldError::TooLarge {
                field: field.name(),
                len,
                capacity,
            });
        }
        Ok(())
    }
}
