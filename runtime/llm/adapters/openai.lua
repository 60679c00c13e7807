-- OpenAI-compatible chat completions: OpenAI, DeepSeek, Groq, Mistral, vLLM, llama.cpp server,
-- LM Studio, Ollama's /v1. Requests are already in this shape; the work is reading answers,
-- including reasoning text and streamed tool-call fragments.
--
-- Hearth writes this file only when it is missing: edit it freely.

local null = json.null
local present, str, num, list, nonempty, trim, merge = util.present, util.str, util.num, util.list, util.nonempty, util.trim, util.merge

-- JSON null and Lua nil both mean "absent".

-- Linear in the length, whatever the whitespace (a lazy pattern can go quadratic).

-- Message content is a string, null, or a list of parts of which the text parts count.
local function text_of(content)
  content = present(content)
  if type(content) == "string" then return content end
  if type(content) ~= "table" then return "" end
  local out = {}
  for _, part in ipairs(content) do
    if type(part) == "table" then
      local t = str(part.text)
      if t then out[#out + 1] = t end
    elseif type(part) == "string" then
      out[#out + 1] = part
    end
  end
  return table.concat(out)
end

-- Copies `src` into `dst`; two objects under the same key merge one level deep.

local function usage_of(u)
  u = present(u)
  if type(u) ~= "table" then return nil end
  local p = num(u.prompt_tokens) or 0
  local c = num(u.completion_tokens) or 0
  return { prompt = p, completion = c, total = num(u.total_tokens) or (p + c) }
end

local function describe_error(e)
  e = present(e)
  if type(e) == "table" then return str(e.message) or json.encode(e) end
  return tostring(e)
end

local M = {
  name = "openai",
  version = "2.2.0",
  endpoint = "/chat/completions",
  -- Chunks are parsed natively for the usual shapes (no Lua call per token);
  -- transform_stream_chunk below still reads the rest. Remove this line to run every chunk
  -- through the script.
  stream_parser = "openai",
  headers = {},
}

function M.transform_request(raw)
  local req = json.decode(raw)
  if type(req) ~= "table" then error("request is not a JSON object") end
  local extra = present(req.extra_body)
  req.extra_body = nil
  req.disable_thinking = nil
  if type(extra) == "table" then merge(req, extra) end
  if req.stream == true and present(req.stream_options) == nil then
    req.stream_options = { include_usage = true }
  end
  return json.encode(req)
end

function M.transform_response(raw)
  local resp = json.decode(raw)
  if type(resp) ~= "table" then error("response is not a JSON object") end
  if present(resp.error) then error("api error: " .. describe_error(resp.error)) end
  local choice = list(resp.choices)[1] or {}
  local msg = present(choice.message) or {}
  local out = {
    content = text_of(msg.content),
    finish_reason = str(choice.finish_reason),
    token_usage = usage_of(resp.usage) or { prompt = 0, completion = 0, total = 0 },
    tool_calls = json.array(),
  }
  local reasoning = nonempty(str(msg.reasoning_content)) or nonempty(str(msg.reasoning))
  if reasoning then out.reasoning_content = reasoning end
  for i, tc in ipairs(list(msg.tool_calls)) do
    local fn = present(tc["function"]) or {}
    local raw_args = present(fn.arguments)
    local args
    if type(raw_args) == "string" then
      args = json.decode(raw_args)
    elseif type(raw_args) == "table" then
      args, raw_args = raw_args, json.encode(raw_args)
    end
    if type(args) ~= "table" or json.is_array(args) then args = {} end
    out.tool_calls[#out.tool_calls + 1] = {
      id = nonempty(str(tc.id)) or ("call_" .. (i - 1)),
      type = "function",
      name = str(fn.name) or "",
      arguments = args,
      raw_arguments = raw_args,
      stream_index = num(tc.index),
    }
  end
  return json.encode(out)
end

function M.transform_stream_chunk(raw)
  local data = trim(raw)
  if data == "" then return "" end
  if data == "[DONE]" then return json.encode({ content = "", done = true }) end
  local chunk = json.decode(data)
  if type(chunk) ~= "table" then return "" end
  if present(chunk.error) then
    log("error", "stream error: " .. describe_error(chunk.error))
    return json.encode({ content = "", done = true, finish_reason = "error" })
  end
  local usage = usage_of(chunk.usage)
  local choice = list(chunk.choices)[1]
  if choice == nil then
    if usage then return json.encode({ content = "", done = false, usage = usage }) end
    return ""
  end
  local delta = present(choice.delta) or {}
  local out = { content = text_of(delta.content), done = false, usage = usage }
  local reasoning = nonempty(str(delta.reasoning_content)) or nonempty(str(delta.reasoning))
  if reasoning then out.reasoning_content = reasoning end
  local finish = str(choice.finish_reason)
  if finish then
    out.finish_reason = finish
    out.done = true
  end
  local calls = list(delta.tool_calls)
  if #calls > 0 then
    out.tool_calls = json.array()
    for i, tc in ipairs(calls) do
      local fn = present(tc["function"]) or {}
      local args = present(fn.arguments)
      if type(args) == "table" then args = json.encode(args) end
      out.tool_calls[#out.tool_calls + 1] = {
        stream_index = num(tc.index) or (i - 1),
        id = nonempty(str(tc.id)),
        name = nonempty(str(fn.name)),
        arguments = type(args) == "string" and args or "",
      }
    end
  end
  return json.encode(out)
end

return M
