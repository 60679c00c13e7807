-- Helpers every bundled adapter uses, installed as the global `util` before an adapter loads.
-- Adapters of your own may use them too (`local str = util.str`).

util = {}
local null = json.null

function util.present(v)
  if v == null then return nil end
  return v
end

function util.str(v)
  v = util.present(v)
  if type(v) == "string" then return v end
  return nil
end

function util.num(v)
  v = util.present(v)
  if type(v) == "number" then return v end
  return nil
end

function util.list(v)
  v = util.present(v)
  if type(v) == "table" then return v end
  return {}
end

function util.nonempty(s)
  if s == nil or s == "" then return nil end
  return s
end

function util.trim(s)
  local first = s:find("%S")
  if not first then return "" end
  local last = #s
  while last > first and s:find("^%s", last) do last = last - 1 end
  return s:sub(first, last)
end

function util.merge(dst, src)
  for k, v in pairs(src) do
    local cur = dst[k]
    if type(cur) == "table" and type(v) == "table" and not json.is_array(cur) and not json.is_array(v) then
      for k2, v2 in pairs(v) do cur[k2] = v2 end
    else
      dst[k] = v
    end
  end
end

function util.object_of(args)
  args = util.present(args)
  if type(args) == "string" then args = json.decode(args) end
  if type(args) ~= "table" or json.is_array(args) then return {} end
  return args
end

function util.text_of(content)
  content = util.present(content)
  if type(content) == "string" then return content end
  if type(content) ~= "table" then return "" end
  local out = {}
  for _, part in ipairs(content) do
    if type(part) == "table" and util.str(part.text) then out[#out + 1] = part.text end
  end
  return table.concat(out)
end
