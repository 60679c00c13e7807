-- Anthropic Messages API (base URL e.g. https://api.anthropic.com/v1, endpoint /messages).
-- System messages become `system`, tool calls become tool_use blocks and tool results
-- tool_result blocks in the next user turn; streamed events become unified chunks, with a
-- tool_use block's content-block index as the tool call's stream_index.
--
-- Hearth writes this file only when it is missing: edit it freely.

local null = json.null
local present, str, num, list, nonempty, trim, merge, object_of, text_of = util.present, util.str, util.num, util.list, util.nonempty, util.trim, util.merge, util.object_of, util.text_of
local API_VERSION = "2023-06-01"
local DEFAULT_MAX_TOKENS = 4096

-- A tool call's arguments as an object: decoded from text, or {} when they are not one.

local function image_block(url)
  local mime, data = url:match("^data:([^;,]+);base64,(.*)$")
  if mime then
    return { type = "image", source = { type = "base64", media_type = mime, data = data } }
  end
  return { type = "image", source = { type = "url", url = url } }
end

-- OpenAI content (string or parts) as Anthropic content blocks; empty text is dropped because
-- the API rejects empty text blocks.
local function blocks_of(content)
  content = present(content)
  local blocks = {}
  if type(content) == "string" then
    if content ~= "" then blocks[1] = { type = "text", text = content } end
    return blocks
  end
  for _, part in ipairs(list(content)) do
    local kind = type(part) == "table" and str(part.type) or nil
    if kind == "text" and nonempty(str(part.text)) then
      blocks[#blocks + 1] = { type = "text", text = part.text }
    elseif kind == "image_url" then
      local image = present(part.image_url)
      local url = type(image) == "table" and str(image.url) or str(image)
      if url then blocks[#blocks + 1] = image_block(url) end
    elseif kind == "image" or kind == "document" then
      blocks[#blocks + 1] = part
    elseif kind ~= nil then
      log("warn", "anthropic: dropping unsupported content part " .. kind)
    end
  end
  return blocks
end

local FINISH = {
  end_turn = "stop",
  stop_sequence = "stop",
  pause_turn = "stop",
  max_tokens = "length",
  model_context_window_exceeded = "length",
  tool_use = "tool_calls",
  refusal = "content_filter",
}

local function finish_reason(reason)
  if reason == nil then return nil end
  return FINISH[reason] or reason
end

local function usage_of(u)
  u = present(u)
  if type(u) ~= "table" then return nil end
  local prompt = (num(u.input_tokens) or 0) + (num(u.cache_creation_input_tokens) or 0)
    + (num(u.cache_read_input_tokens) or 0)
  local completion = num(u.output_tokens) or 0
  return { prompt = prompt, completion = completion, total = prompt + completion }
end

local function describe_error(e)
  e = present(e)
  if type(e) == "table" then return str(e.message) or json.encode(e) end
  return tostring(e)
end

local M = {
  name = "anthropic",
  version = "1.0.0",
  endpoint = "/messages",
  headers = { ["anthropic-version"] = API_VERSION },
}

function M.build_headers(meta)
  return { ["x-api-key"] = meta.api_key or "", ["anthropic-version"] = API_VERSION }
end

function M.transform_request(raw)
  local req = json.decode(raw)
  if type(req) ~= "table" then error("request is not a JSON object") end

  local system, messages = {}, json.array()
  -- Same-role turns merge: all tool results of one assistant turn must sit in one user turn.
  local function push(role, blocks)
    local last = messages[#messages]
    if last and last.role == role then
      for _, b in ipairs(blocks) do last.content[#last.content + 1] = b end
    else
      messages[#messages + 1] = { role = role, content = json.array(blocks) }
    end
  end

  for _, m in ipairs(list(req.messages)) do
    local role = str(m.role) or "user"
    if role == "system" or role == "developer" then
      local t = text_of(m.content)
      if t ~= "" then system[#system + 1] = t end
    elseif role == "tool" then
      local block = { type = "tool_result", tool_use_id = str(m.tool_call_id) or "" }
      local t = text_of(m.content)
      if t ~= "" then block.content = t end
      push("user", { block })
    elseif role == "assistant" then
      local blocks = blocks_of(m.content)
      for i, tc in ipairs(list(m.tool_calls)) do
        local fn = present(tc["function"]) or {}
        blocks[#blocks + 1] = {
          type = "tool_use",
          id = nonempty(str(tc.id)) or ("call_" .. (i - 1)),
          name = str(fn.name) or "",
          input = object_of(fn.arguments),
        }
      end
      if #blocks == 0 then blocks[1] = { type = "text", text = "(empty)" } end
      push("assistant", blocks)
    else
      local blocks = blocks_of(m.content)
      if #blocks == 0 then blocks[1] = { type = "text", text = "(empty)" } end
      push("user", blocks)
    end
  end
  -- The conversation must open with a user turn (pruned histories may not).
  if messages[1] and messages[1].role ~= "user" then
    table.insert(messages, 1, { role = "user", content = json.array({ { type = "text", text = "(continued)" } }) })
  end

  local max_tokens = num(req.max_tokens)
  if max_tokens == nil or max_tokens <= 0 then max_tokens = DEFAULT_MAX_TOKENS end
  local out = {
    model = str(req.model),
    messages = messages,
    max_tokens = math.tointeger(max_tokens) or DEFAULT_MAX_TOKENS,
  }
  if #system > 0 then out.system = table.concat(system, "\n\n") end
  if req.stream == true then out.stream = true end
  local temperature = num(req.temperature)
  if temperature then out.temperature = math.min(math.max(temperature, 0), 1) end
  out.top_p = num(req.top_p)
  local stop = present(req.stop)
  if type(stop) == "string" then
    out.stop_sequences = { stop }
  elseif type(stop) == "table" and #stop > 0 then
    out.stop_sequences = stop
  end

  local tools = list(req.tools)
  if #tools > 0 then
    out.tools = json.array()
    for _, t in ipairs(tools) do
      local fn = present(t["function"]) or t
      local schema = present(fn.parameters)
      if type(schema) ~= "table" or json.is_array(schema) then schema = { properties = {} } end
      if schema.type == nil then schema.type = "object" end
      out.tools[#out.tools + 1] = {
        name = str(fn.name) or "",
        description = nonempty(str(fn.description)),
        input_schema = schema,
      }
    end
    local choice = present(req.tool_choice)
    if choice == "auto" then
      out.tool_choice = { type = "auto" }
    elseif choice == "none" then
      out.tool_choice = { type = "none" }
    elseif choice == "required" or choice == "any" then
      out.tool_choice = { type = "any" }
    elseif type(choice) == "table" then
      local fn = present(choice["function"])
      local name = (type(fn) == "table" and str(fn.name)) or str(choice.name)
      if name then out.tool_choice = { type = "tool", name = name } end
    end
  end

  local extra = present(req.extra_body)
  if type(extra) == "table" then merge(out, extra) end
  return json.encode(out)
end

function M.transform_response(raw)
  local resp = json.decode(raw)
  if type(resp) ~= "table" then error("response is not a JSON object") end
  if str(resp.type) == "error" or present(resp.error) then
    error("api error: " .. describe_error(resp.error))
  end
  local text, thinking, calls = {}, {}, json.array()
  for i, block in ipairs(list(resp.content)) do
    local kind = str(block.type)
    if kind == "text" then
      text[#text + 1] = str(block.text) or ""
    elseif kind == "thinking" then
      thinking[#thinking + 1] = str(block.thinking) or ""
    elseif kind == "tool_use" then
      local input = object_of(block.input)
      calls[#calls + 1] = {
        id = nonempty(str(block.id)) or ("call_" .. (i - 1)),
        type = "function",
        name = str(block.name) or "",
        arguments = input,
        raw_arguments = json.encode(input),
      }
    end
  end
  local out = {
    content = table.concat(text),
    finish_reason = finish_reason(str(resp.stop_reason)),
    token_usage = usage_of(resp.usage) or { prompt = 0, completion = 0, total = 0 },
    tool_calls = calls,
  }
  if #thinking > 0 then out.reasoning_content = table.concat(thinking) end
  return json.encode(out)
end

-- Input tokens reported by message_start, for message_delta events that carry only output
-- tokens. Calls are serialised; two interleaved streams could only mix up token counts.
local stream_prompt_tokens = 0

function M.transform_stream_chunk(raw)
  local data = trim(raw)
  if data == "" then return "" end
  if data == "[DONE]" then return json.encode({ content = "", done = true }) end
  local ev = json.decode(data)
  if type(ev) ~= "table" then return "" end
  local kind = str(ev.type)

  if kind == "message_start" then
    local usage = usage_of((present(ev.message) or {}).usage)
    if usage == nil then return "" end
    stream_prompt_tokens = usage.prompt
    return json.encode({ content = "", done = false, usage = usage })
  elseif kind == "content_block_start" then
    local block = present(ev.content_block) or {}
    local bt = str(block.type)
    if bt == "tool_use" then
      local call = {
        stream_index = num(ev.index) or 0,
        id = nonempty(str(block.id)),
        name = nonempty(str(block.name)),
        arguments = "",
      }
      -- The input normally follows as input_json_delta; keep it if a server sends it here.
      local input = present(block.input)
      if type(input) == "table" and next(input) ~= nil then call.arguments = json.encode(input) end
      return json.encode({ content = "", done = false, tool_calls = { call } })
    elseif bt == "text" and nonempty(str(block.text)) then
      return json.encode({ content = block.text, done = false })
    elseif bt == "thinking" and nonempty(str(block.thinking)) then
      return json.encode({ content = "", reasoning_content = block.thinking, done = false })
    end
    return ""
  elseif kind == "content_block_delta" then
    local delta = present(ev.delta) or {}
    local dt = str(delta.type)
    if dt == "text_delta" and nonempty(str(delta.text)) then
      return json.encode({ content = delta.text, done = false })
    elseif dt == "thinking_delta" and nonempty(str(delta.thinking)) then
      return json.encode({ content = "", reasoning_content = delta.thinking, done = false })
    elseif dt == "input_json_delta" and nonempty(str(delta.partial_json)) then
      local call = { stream_index = num(ev.index) or 0, arguments = delta.partial_json }
      return json.encode({ content = "", done = false, tool_calls = { call } })
    end
    return ""
  elseif kind == "message_delta" then
    local delta = present(ev.delta) or {}
    local out = { content = "", done = false, finish_reason = finish_reason(str(delta.stop_reason)) }
    local u = present(ev.usage)
    if type(u) == "table" then
      local prompt = stream_prompt_tokens
      if num(u.input_tokens) then prompt = usage_of(u).prompt end
      local completion = num(u.output_tokens) or 0
      out.usage = { prompt = prompt, completion = completion, total = prompt + completion }
    end
    return json.encode(out)
  elseif kind == "message_stop" then
    return json.encode({ content = "", done = true })
  elseif kind == "error" then
    log("error", "anthropic stream error: " .. describe_error(ev.error))
    return json.encode({ content = "", done = true, finish_reason = "error" })
  end
  return ""
end

return M
