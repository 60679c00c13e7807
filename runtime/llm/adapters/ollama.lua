-- Ollama's native chat API (base URL e.g. http://127.0.0.1:11434, endpoint /api/chat).
-- Streams are NDJSON: one JSON object per line, the last with `done: true` and the token
-- counts. Tool calls arrive whole, with arguments as an object. (For Ollama's OpenAI-compatible
-- /v1 endpoint use openai.lua instead.)
--
-- Hearth writes this file only when it is missing: edit it freely.

local null = json.null
local present, str, num, list, nonempty, trim, merge, object_of = util.present, util.str, util.num, util.list, util.nonempty, util.trim, util.merge, util.object_of

-- OpenAI content as Ollama's text plus base64 images.
local function content_of(content)
  content = present(content)
  if type(content) == "string" then return content, nil end
  local text, images = {}, {}
  for _, part in ipairs(list(content)) do
    local kind = type(part) == "table" and str(part.type) or nil
    if kind == "text" and str(part.text) then
      text[#text + 1] = part.text
    elseif kind == "image_url" then
      local image = present(part.image_url)
      local url = type(image) == "table" and str(image.url) or str(image)
      local data = url and url:match("^data:[^,]*;base64,(.*)$")
      if data then
        images[#images + 1] = data
      elseif url then
        log("warn", "ollama: only inline (data:) images can be sent; dropping " .. url:sub(1, 80))
      end
    end
  end
  if #images == 0 then images = nil end
  return table.concat(text), images
end

local function usage_of(obj)
  local prompt, completion = num(obj.prompt_eval_count), num(obj.eval_count)
  if prompt == nil and completion == nil then return nil end
  prompt, completion = prompt or 0, completion or 0
  return { prompt = prompt, completion = completion, total = prompt + completion }
end

local function finish_reason(reason, has_calls)
  if has_calls and (reason == nil or reason == "stop") then return "tool_calls" end
  return reason
end

local M = {
  name = "ollama",
  version = "1.0.0",
  endpoint = "/api/chat",
  stream_format = "ndjson",
  headers = {},
}

function M.transform_request(raw)
  local req = json.decode(raw)
  if type(req) ~= "table" then error("request is not a JSON object") end
  local messages, names = json.array(), {}
  for _, m in ipairs(list(req.messages)) do
    local role = str(m.role) or "user"
    if role == "developer" then role = "system" end
    local text, images = content_of(m.content)
    local msg = { role = role, content = text, images = images }
    if role == "assistant" then
      local calls = list(m.tool_calls)
      if #calls > 0 then
        msg.tool_calls = json.array()
        for _, tc in ipairs(calls) do
          local fn = present(tc["function"]) or {}
          local name = str(fn.name) or ""
          names[str(tc.id) or ""] = name
          msg.tool_calls[#msg.tool_calls + 1] = { ["function"] = { name = name, arguments = object_of(fn.arguments) } }
        end
      end
    elseif role == "tool" then
      msg.tool_name = names[str(m.tool_call_id) or ""] or str(m.name)
    end
    messages[#messages + 1] = msg
  end

  -- Ollama streams unless told otherwise, so `stream` is always explicit.
  local out = { model = str(req.model), messages = messages, stream = req.stream == true }
  local options = {}
  options.temperature = num(req.temperature)
  options.top_p = num(req.top_p)
  local max_tokens = num(req.max_tokens)
  if max_tokens and max_tokens > 0 then options.num_predict = math.tointeger(max_tokens) end
  local stop = present(req.stop)
  if type(stop) == "string" then options.stop = { stop } elseif type(stop) == "table" and #stop > 0 then options.stop = stop end
  if next(options) ~= nil then out.options = options end
  local tools = list(req.tools)
  if #tools > 0 then out.tools = tools end
  if req.disable_thinking == false then out.think = true end

  local extra = present(req.extra_body)
  if type(extra) == "table" then merge(out, extra) end
  return json.encode(out)
end

-- Tool calls of one message, with their arguments as objects.
local function calls_of(msg, index_of)
  local out = {}
  for i, tc in ipairs(list(msg.tool_calls)) do
    local fn = present(tc["function"]) or {}
    local args = object_of(fn.arguments)
    local index = index_of(i)
    out[#out + 1] = {
      id = nonempty(str(tc.id)) or ("call_" .. index),
      name = str(fn.name) or "",
      args = args,
      index = index,
    }
  end
  return out
end

function M.transform_response(raw)
  local resp = json.decode(raw)
  if type(resp) ~= "table" then error("response is not a JSON object") end
  if str(resp.error) then error("api error: " .. resp.error) end
  local msg = present(resp.message) or {}
  local calls = calls_of(msg, function(i) return i - 1 end)
  local out = {
    content = str(msg.content) or "",
    finish_reason = finish_reason(str(resp.done_reason), #calls > 0),
    token_usage = usage_of(resp) or { prompt = 0, completion = 0, total = 0 },
    tool_calls = json.array(),
  }
  local thinking = nonempty(str(msg.thinking))
  if thinking then out.reasoning_content = thinking end
  for _, c in ipairs(calls) do
    out.tool_calls[#out.tool_calls + 1] = {
      id = c.id, type = "function", name = c.name, arguments = c.args, raw_arguments = json.encode(c.args),
    }
  end
  return json.encode(out)
end

-- Calls arrive whole, possibly in different lines, so each gets an index of its own.
local next_stream_index = 0
local function take_stream_index()
  local i = next_stream_index
  next_stream_index = (next_stream_index + 1) % 2147483647
  return i
end

function M.transform_stream_chunk(raw)
  local data = trim(raw)
  -- Tolerate a gateway that re-frames the NDJSON as SSE.
  if data:sub(1, 5) == "data:" then data = trim(data:sub(6)) end
  if data == "" then return "" end
  if data == "[DONE]" then return json.encode({ content = "", done = true }) end
  local obj = json.decode(data)
  if type(obj) ~= "table" then return "" end
  if str(obj.error) then
    log("error", "ollama stream error: " .. obj.error)
    return json.encode({ content = "", done = true, finish_reason = "error" })
  end
  local msg = present(obj.message) or {}
  local out = { content = str(msg.content) or "", done = obj.done == true }
  local thinking = nonempty(str(msg.thinking))
  if thinking then out.reasoning_content = thinking end
  local calls = calls_of(msg, function() return take_stream_index() end)
  if #calls > 0 then
    out.tool_calls = json.array()
    for _, c in ipairs(calls) do
      out.tool_calls[#out.tool_calls + 1] = {
        stream_index = c.index, id = c.id, name = c.name, arguments = json.encode(c.args),
      }
    end
  end
  if out.done then
    out.finish_reason = str(obj.done_reason) or "stop"
    out.usage = usage_of(obj)
  end
  return json.encode(out)
end

return M
