-- Google Gemini API (base URL e.g. https://generativelanguage.googleapis.com/v1beta).
-- The model is part of the path: Hearth replaces `{model}` in `endpoint` / `stream_endpoint`
-- with the request's model. The key travels as `x-goog-api-key` (never as a bearer token).
--
-- Gemini has no tool-call ids of its own in older models, so ids are made here; a part's
-- thought signature rides inside the id (`<id>#sig:<signature>`) and is put back on the
-- functionCall part when the conversation is sent again, as thinking models require.
--
-- Hearth writes this file only when it is missing: edit it freely.

local null = json.null
local present, str, num, list, nonempty, trim, merge, object_of, text_of = util.present, util.str, util.num, util.list, util.nonempty, util.trim, util.merge, util.object_of, util.text_of
local SIG = "#sig:"

-- JSON Schema keys Gemini's function declarations reject.
local UNSUPPORTED_SCHEMA_KEYS = {
  ["$schema"] = true, ["$id"] = true, ["$defs"] = true, ["$comment"] = true,
  definitions = true, additionalProperties = true, examples = true,
}

-- Removes rejected keys, and empty `properties` (Gemini wants them non-empty), walking only
-- the places that hold schemas, so a property that happens to be named like a keyword stays.
local function clean_schema(schema)
  if type(schema) ~= "table" then return schema end
  for key in pairs(UNSUPPORTED_SCHEMA_KEYS) do schema[key] = nil end
  local props = schema.properties
  if type(props) == "table" then
    if next(props) == nil then
      schema.properties = nil
    else
      for _, p in pairs(props) do clean_schema(p) end
    end
  end
  clean_schema(schema.items)
  for _, key in ipairs({ "anyOf", "oneOf", "allOf" }) do
    if type(schema[key]) == "table" then
      for _, s in ipairs(schema[key]) do clean_schema(s) end
    end
  end
  return schema
end

local function parts_of(content)
  content = present(content)
  local parts = {}
  if type(content) == "string" then
    if content ~= "" then parts[1] = { text = content } end
    return parts
  end
  for _, part in ipairs(list(content)) do
    local kind = type(part) == "table" and str(part.type) or nil
    if kind == "text" and nonempty(str(part.text)) then
      parts[#parts + 1] = { text = part.text }
    elseif kind == "image_url" then
      local image = present(part.image_url)
      local url = type(image) == "table" and str(image.url) or str(image)
      if url then
        local mime, data = url:match("^data:([^;,]+);base64,(.*)$")
        if mime then
          parts[#parts + 1] = { inlineData = { mimeType = mime, data = data } }
        else
          parts[#parts + 1] = { fileData = { fileUri = url } }
        end
      end
    elseif kind == "input_audio" then
      local audio = present(part.input_audio) or {}
      if str(audio.data) then
        parts[#parts + 1] = { inlineData = { mimeType = "audio/" .. (str(audio.format) or "wav"), data = audio.data } }
      end
    elseif kind ~= nil then
      log("warn", "gemini: dropping unsupported content part " .. kind)
    end
  end
  return parts
end

local FINISH = {
  STOP = "stop",
  MAX_TOKENS = "length",
  SAFETY = "content_filter",
  RECITATION = "content_filter",
  BLOCKLIST = "content_filter",
  PROHIBITED_CONTENT = "content_filter",
  SPII = "content_filter",
  IMAGE_SAFETY = "content_filter",
  MALFORMED_FUNCTION_CALL = "error",
}

local function finish_reason(reason)
  if reason == nil or reason == "FINISH_REASON_UNSPECIFIED" then return nil end
  return FINISH[reason] or string.lower(reason)
end

local function usage_of(u)
  u = present(u)
  if type(u) ~= "table" then return nil end
  local prompt = num(u.promptTokenCount) or 0
  -- Thinking tokens are billed as output.
  local completion = (num(u.candidatesTokenCount) or 0) + (num(u.thoughtsTokenCount) or 0)
  return { prompt = prompt, completion = completion, total = num(u.totalTokenCount) or (prompt + completion) }
end

local function describe_error(e)
  e = present(e)
  if type(e) == "table" then return str(e.message) or json.encode(e) end
  return tostring(e)
end

-- Every streamed call arrives whole, in one chunk, so each gets an index of its own; a running
-- counter keeps indexes distinct across chunks (and across streams, which never share one).
local next_stream_index = 0
local function take_stream_index()
  local i = next_stream_index
  next_stream_index = (next_stream_index + 1) % 2147483647
  return i
end

-- The text, reasoning and calls of a candidate's parts.
local function read_parts(parts, index_of)
  local text, thought, calls = {}, {}, {}
  for _, part in ipairs(list(parts)) do
    local call = present(part.functionCall)
    if type(call) == "table" then
      local args = object_of(call.args)
      local index = index_of(#calls + 1)
      local id = nonempty(str(call.id)) or ("call_" .. index)
      local sig = nonempty(str(part.thoughtSignature))
      if sig then id = id .. SIG .. sig end
      calls[#calls + 1] = { id = id, name = str(call.name) or "", args = args, index = index }
    elseif str(part.text) then
      if part.thought == true then thought[#thought + 1] = part.text else text[#text + 1] = part.text end
    end
  end
  return table.concat(text), table.concat(thought), calls
end

local M = {
  name = "gemini",
  version = "1.0.0",
  endpoint = "/models/{model}:generateContent",
  stream_endpoint = "/models/{model}:streamGenerateContent?alt=sse",
  headers = {},
}

function M.build_headers(meta)
  return { ["x-goog-api-key"] = meta.api_key or "" }
end

function M.transform_request(raw)
  local req = json.decode(raw)
  if type(req) ~= "table" then error("request is not a JSON object") end

  local system, contents, names = {}, json.array(), {}
  local function push(role, parts)
    if #parts == 0 then return end
    local last = contents[#contents]
    if last and last.role == role then
      for _, p in ipairs(parts) do last.parts[#last.parts + 1] = p end
    else
      contents[#contents + 1] = { role = role, parts = json.array(parts) }
    end
  end

  for _, m in ipairs(list(req.messages)) do
    local role = str(m.role) or "user"
    if role == "system" or role == "developer" then
      local t = text_of(m.content)
      if t ~= "" then system[#system + 1] = { text = t } end
    elseif role == "assistant" then
      local parts = parts_of(m.content)
      for _, tc in ipairs(list(m.tool_calls)) do
        local fn = present(tc["function"]) or {}
        local name = str(fn.name) or ""
        local id = str(tc.id) or ""
        names[id] = name
        local part = { functionCall = { name = name, args = object_of(fn.arguments) } }
        local sig = id:find(SIG, 1, true)
        if sig then part.thoughtSignature = id:sub(sig + #SIG) end
        parts[#parts + 1] = part
      end
      push("model", parts)
    elseif role == "tool" then
      local id = str(m.tool_call_id) or ""
      local body = text_of(m.content)
      local response = json.decode(body)
      if type(response) ~= "table" or json.is_array(response) then response = { result = body } end
      push("user", { { functionResponse = { name = names[id] or str(m.name) or "tool", response = response } } })
    else
      push("user", parts_of(m.content))
    end
  end

  local out = { contents = contents }
  if #system > 0 then out.systemInstruction = { parts = json.array(system) } end

  local gen = {}
  gen.temperature = num(req.temperature)
  gen.topP = num(req.top_p)
  local max_tokens = num(req.max_tokens)
  if max_tokens and max_tokens > 0 then gen.maxOutputTokens = math.tointeger(max_tokens) end
  local stop = present(req.stop)
  if type(stop) == "string" then gen.stopSequences = { stop } elseif type(stop) == "table" and #stop > 0 then gen.stopSequences = stop end
  if req.disable_thinking == false then gen.thinkingConfig = { includeThoughts = true } end
  if next(gen) ~= nil then out.generationConfig = gen end

  local tools = list(req.tools)
  if #tools > 0 then
    local decls = json.array()
    for _, t in ipairs(tools) do
      local fn = present(t["function"]) or t
      local decl = { name = str(fn.name) or "", description = nonempty(str(fn.description)) }
      local params = present(fn.parameters)
      if type(params) == "table" and not json.is_array(params) then
        params = clean_schema(params)
        -- A parameterless tool declares no schema at all.
        if params.properties ~= nil or (params.type ~= nil and params.type ~= "object") then
          decl.parameters = params
        end
      end
      decls[#decls + 1] = decl
    end
    out.tools = { { functionDeclarations = decls } }
    local choice = present(req.tool_choice)
    local mode
    if choice == "auto" then
      mode = { mode = "AUTO" }
    elseif choice == "none" then
      mode = { mode = "NONE" }
    elseif choice == "required" or choice == "any" then
      mode = { mode = "ANY" }
    elseif type(choice) == "table" then
      local fn = present(choice["function"])
      local name = (type(fn) == "table" and str(fn.name)) or str(choice.name)
      if name then mode = { mode = "ANY", allowedFunctionNames = { name } } end
    end
    if mode then out.toolConfig = { functionCallingConfig = mode } end
  end

  local extra = present(req.extra_body)
  if type(extra) == "table" then merge(out, extra) end
  return json.encode(out)
end

function M.transform_response(raw)
  local resp = json.decode(raw)
  if type(resp) ~= "table" then error("response is not a JSON object") end
  if present(resp.error) then error("api error: " .. describe_error(resp.error)) end
  local candidate = list(resp.candidates)[1]
  local out = {
    content = "",
    token_usage = usage_of(resp.usageMetadata) or { prompt = 0, completion = 0, total = 0 },
    tool_calls = json.array(),
  }
  if candidate == nil then
    local feedback = present(resp.promptFeedback)
    if type(feedback) == "table" and str(feedback.blockReason) then out.finish_reason = "content_filter" end
    return json.encode(out)
  end
  local content = present(candidate.content) or {}
  local text, thought, calls = read_parts(content.parts, function(n) return n - 1 end)
  out.content = text
  if thought ~= "" then out.reasoning_content = thought end
  for _, c in ipairs(calls) do
    out.tool_calls[#out.tool_calls + 1] = {
      id = c.id, type = "function", name = c.name, arguments = c.args, raw_arguments = json.encode(c.args),
    }
  end
  out.finish_reason = finish_reason(str(candidate.finishReason))
  if #calls > 0 and out.finish_reason == "stop" then out.finish_reason = "tool_calls" end
  return json.encode(out)
end

function M.transform_stream_chunk(raw)
  local data = trim(raw)
  if data == "" then return "" end
  if data == "[DONE]" then return json.encode({ content = "", done = true }) end
  local chunk = json.decode(data)
  if type(chunk) ~= "table" then return "" end
  if present(chunk.error) then
    log("error", "gemini stream error: " .. describe_error(chunk.error))
    return json.encode({ content = "", done = true, finish_reason = "error" })
  end
  local out = { content = "", done = false, usage = usage_of(chunk.usageMetadata) }
  local candidate = list(chunk.candidates)[1]
  if candidate == nil then
    local feedback = present(chunk.promptFeedback)
    if type(feedback) == "table" and str(feedback.blockReason) then
      out.finish_reason = "content_filter"
      out.done = true
    elseif out.usage == nil then
      return ""
    end
    return json.encode(out)
  end
  local content = present(candidate.content) or {}
  local text, thought, calls = read_parts(content.parts, function() return take_stream_index() end)
  out.content = text
  if thought ~= "" then out.reasoning_content = thought end
  if #calls > 0 then
    out.tool_calls = json.array()
    for _, c in ipairs(calls) do
      out.tool_calls[#out.tool_calls + 1] = {
        stream_index = c.index, id = c.id, name = c.name, arguments = json.encode(c.args),
      }
    end
  end
  local finish = finish_reason(str(candidate.finishReason))
  if finish then
    out.finish_reason = finish
    out.done = true
  end
  return json.encode(out)
end

return M
