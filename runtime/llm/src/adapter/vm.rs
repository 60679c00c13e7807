//! One adapter script in its own sandboxed Lua state. An `AdapterVm` is not `Send` (a Lua state
//! belongs to one thread); [`super::Adapter`] owns it on a dedicated thread.

use super::sandbox::{self, Meter, Trip, describe, is_memory};
use super::{AdapterError, AdapterLimits, Exceeded, HeaderMeta, StreamFormat, json_encode};
use mlua::chunk::ChunkMode;
use mlua::{Function, Lua, Table, Value};
use std::sync::Arc;

/// The endpoint an adapter gets when its table names none.
pub const DEFAULT_ENDPOINT: &str = "/chat/completions";

/// The static part of an adapter, read once when its chunk ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AdapterInfo {
    pub name: String,
    pub file: String,
    pub version: String,
    pub endpoint: String,
    pub stream_endpoint: String,
    pub stream_format: StreamFormat,
    pub headers: Vec<(String, String)>,
    pub has_build_headers: bool,
    pub has_response_transform: bool,
    pub has_stream_transform: bool,
    pub native_openai_stream: bool,
}

/// The script functions a caller can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Func {
    Request,
    Response,
    StreamChunk,
}

impl Func {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Func::Request => "transform_request",
            Func::Response => "transform_response",
            Func::StreamChunk => "transform_stream_chunk",
        }
    }
}

pub(crate) struct AdapterVm {
    name: String,
    limits: AdapterLimits,
    meter: Arc<Meter>,
    transform_request: Function,
    transform_response: Option<Function>,
    transform_stream_chunk: Option<Function>,
    build_headers: Option<Function>,
    // Declared last so the function handles above are released before the state closes.
    lua: Lua,
}

impl AdapterVm {
    /// Runs the chunk `source` (named `file` in error messages) and reads the adapter table.
    pub(crate) fn load(
        file: &str,
        source: &str,
        limits: AdapterLimits,
    ) -> Result<(Self, AdapterInfo), AdapterError> {
        let load_err = |message: String| AdapterError::Load {
            file: file.to_string(),
            message,
        };
        let stem = file.strip_suffix(".lua").unwrap_or(file);
        let meter = Arc::new(Meter::new());
        let lua = sandbox::new_state(stem, &limits, &meter).map_err(|e| load_err(describe(&e)))?;

        meter.begin(&limits);
        let result = lua
            .load(source)
            .set_name(format!("@{file}"))
            .set_mode(ChunkMode::Text)
            .eval::<Value>();
        let trip = meter.end();
        let module = match (result, trip) {
            (_, Some(trip)) => return Err(load_err(exceeded(trip, &limits).to_string())),
            (Err(e), None) if is_memory(&e) => {
                return Err(load_err(format!(
                    "out of memory (limit {} bytes)",
                    limits.memory_bytes
                )));
            }
            (Err(e), None) => return Err(load_err(describe(&e))),
            (Ok(Value::Table(t)), None) => t,
            (Ok(other), None) => {
                return Err(load_err(format!(
                    "the chunk must return the adapter table, it returned {}",
                    other.type_name()
                )));
            }
        };

        let text = |key: &str| -> Result<Option<String>, AdapterError> {
            match module
                .raw_get::<Value>(key)
                .map_err(|e| load_err(describe(&e)))?
            {
                Value::Nil => Ok(None),
                Value::String(s) => Ok(Some(s.to_string_lossy())),
                Value::Integer(i) => Ok(Some(i.to_string())),
                Value::Number(n) => Ok(Some(n.to_string())),
                other => Err(load_err(format!(
                    "`{key}` must be a string, not {}",
                    other.type_name()
                ))),
            }
        };
        let function = |key: &str| -> Result<Option<Function>, AdapterError> {
            match module
                .raw_get::<Value>(key)
                .map_err(|e| load_err(describe(&e)))?
            {
                Value::Nil => Ok(None),
                Value::Function(f) => Ok(Some(f)),
                other => Err(load_err(format!(
                    "`{key}` must be a function, not {}",
                    other.type_name()
                ))),
            }
        };

        let name = text("name")?
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| stem.to_string());
        let endpoint = text("endpoint")?
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
        let stream_endpoint = text("stream_endpoint")?
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| endpoint.clone());
        let stream_format = match text("stream_format")?.as_deref() {
            None | Some("sse") => StreamFormat::Sse,
            Some("ndjson") => StreamFormat::Ndjson,
            Some(other) => {
                return Err(load_err(format!(
                    "unknown stream_format {other:?} (sse or ndjson)"
                )));
            }
        };
        let native_openai_stream = match text("stream_parser")?.as_deref() {
            None => false,
            Some("openai") if stream_format == StreamFormat::Sse => true,
            Some(other) => {
                return Err(load_err(format!(
                    "unknown stream_parser {other:?} (openai, with sse)"
                )));
            }
        };
        let headers = match module
            .raw_get::<Value>("headers")
            .map_err(|e| load_err(describe(&e)))?
        {
            Value::Nil => Vec::new(),
            Value::Table(t) => header_list(&t).map_err(load_err)?,
            other => {
                return Err(load_err(format!(
                    "`headers` must be a table, not {}",
                    other.type_name()
                )));
            }
        };
        let Some(transform_request) = function("transform_request")? else {
            return Err(load_err(
                "the adapter table has no transform_request function".to_string(),
            ));
        };
        let transform_response = function("transform_response")?;
        let transform_stream_chunk = function("transform_stream_chunk")?;
        let build_headers = function("build_headers")?;

        let info = AdapterInfo {
            name: name.clone(),
            file: file.to_string(),
            version: text("version")?.unwrap_or_default(),
            endpoint,
            stream_endpoint,
            stream_format,
            headers,
            has_build_headers: build_headers.is_some(),
            has_response_transform: transform_response.is_some(),
            has_stream_transform: transform_stream_chunk.is_some(),
            native_openai_stream,
        };
        let vm = AdapterVm {
            name,
            limits,
            meter,
            transform_request,
            transform_response,
            transform_stream_chunk,
            build_headers,
            lua,
        };
        Ok((vm, info))
    }

    /// Runs one transform on `input`. A missing optional transform, or one that returns `nil`,
    /// passes `input` through unchanged; a returned table is JSON-encoded.
    pub(crate) fn call(&self, func: Func, input: &str) -> Result<String, AdapterError> {
        let f = match func {
            Func::Request => Some(&self.transform_request),
            Func::Response => self.transform_response.as_ref(),
            Func::StreamChunk => self.transform_stream_chunk.as_ref(),
        };
        let Some(f) = f else {
            return Ok(input.to_string());
        };
        let value = self.metered(func.name(), || f.call::<Value>(input))?;
        match value {
            Value::String(s) => Ok(s.to_string_lossy()),
            Value::Nil if func != Func::Request => Ok(input.to_string()),
            Value::Table(_) => json_encode::encode_bounded(
                &self.lua,
                &value,
                json_encode::budget(&self.lua, self.limits.memory_bytes),
            )
            .map_err(|message| {
                self.script_err(
                    func.name(),
                    format!("returned a table that is not JSON: {message}"),
                )
            }),
            other => Err(self.script_err(
                func.name(),
                format!("must return a string, returned {}", other.type_name()),
            )),
        }
    }

    /// Calls `build_headers(meta)`; an adapter without it has only its static headers, which the
    /// caller already holds.
    pub(crate) fn build_headers(
        &self,
        meta: &HeaderMeta,
    ) -> Result<Vec<(String, String)>, AdapterError> {
        const FUNC: &str = "build_headers";
        let Some(f) = &self.build_headers else {
            return Ok(Vec::new());
        };
        let value = self.metered(FUNC, || {
            let source = self.lua.create_table()?;
            source.raw_set("name", meta.source.as_str())?;
            let t = self.lua.create_table()?;
            t.raw_set("url", meta.url.as_str())?;
            t.raw_set("method", meta.method.as_str())?;
            t.raw_set("body", meta.body.as_str())?;
            t.raw_set("api_key", meta.api_key.as_str())?;
            t.raw_set("timestamp", meta.timestamp)?;
            t.raw_set("source", source)?;
            f.call::<Value>(t)
        })?;
        match value {
            Value::Table(t) => header_list(&t).map_err(|m| self.script_err(FUNC, m)),
            Value::Nil => Ok(Vec::new()),
            other => Err(self.script_err(
                FUNC,
                format!("must return a table, returned {}", other.type_name()),
            )),
        }
    }

    /// Runs `body` under the call budget and turns a failure into the matching error.
    fn metered<T>(
        &self,
        function: &'static str,
        body: impl FnOnce() -> mlua::Result<T>,
    ) -> Result<T, AdapterError> {
        self.meter.begin(&self.limits);
        let result = body();
        let trip = self.meter.end();
        let err = match (result, trip) {
            (Ok(v), None) => return Ok(v),
            (_, Some(trip)) => AdapterError::Budget {
                adapter: self.name.clone(),
                function,
                exceeded: exceeded(trip, &self.limits),
            },
            (Err(e), None) if is_memory(&e) => AdapterError::Memory {
                adapter: self.name.clone(),
                function,
                limit_bytes: self.limits.memory_bytes,
            },
            (Err(e), None) => self.script_err(function, describe(&e)),
        };
        // Give back what a runaway call allocated before the next call starts.
        let _ = self.lua.gc_collect();
        Err(err)
    }

    fn script_err(&self, function: &'static str, message: String) -> AdapterError {
        AdapterError::Script {
            adapter: self.name.clone(),
            function,
            message,
        }
    }
}

fn exceeded(trip: Trip, limits: &AdapterLimits) -> Exceeded {
    match trip {
        Trip::Instructions => Exceeded::Instructions(limits.instructions),
        Trip::Time => Exceeded::Time(limits.wall),
    }
}

/// Reads a `{name = value}` table into sorted header pairs; values may be strings or numbers.
fn header_list(t: &Table) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair.map_err(|e| describe(&e))?;
        let Value::String(k) = k else {
            return Err(format!(
                "header names must be strings, found a {}",
                k.type_name()
            ));
        };
        let name = k.to_string_lossy();
        let value = match v {
            Value::String(s) => s.to_string_lossy(),
            Value::Integer(i) => i.to_string(),
            Value::Number(n) => n.to_string(),
            Value::Boolean(b) => b.to_string(),
            other => return Err(format!("header {name} has a {} value", other.type_name())),
        };
        // A CR or LF would let a script smuggle extra header lines into the request.
        if name.is_empty() || name.contains(['\r', '\n', ':']) || value.contains(['\r', '\n']) {
            return Err(format!("header {name:?} is not a valid header line"));
        }
        out.push((name, value));
    }
    out.sort();
    Ok(out)
}
