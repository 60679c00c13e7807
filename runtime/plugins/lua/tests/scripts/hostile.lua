-- Every way out of the sandbox or its budget this plugin knows, one tool each.
sdk.tool{ name = "spin", description = "loops forever",
  handler = function() while true do end end }

sdk.tool{ name = "spin_caught", description = "loops forever inside pcall",
  handler = function()
    for _ = 1, 100 do pcall(function() while true do end end) end
    return "escaped"
  end }

sdk.tool{ name = "hog", description = "allocates without end",
  handler = function()
    local t = {}
    for i = 1, 1e9 do t[i] = string.rep("x", 1 << 20) .. i end
  end }

sdk.tool{ name = "rep_bomb", description = "one huge string",
  handler = function() return #string.rep("x", 1 << 40) end }

sdk.tool{ name = "reach", description = "reports what escape hatches exist",
  handler = function()
    local found = {}
    for _, name in ipairs({ "io", "os", "require", "package", "debug", "dofile", "loadfile", "collectgarbage" }) do
      if _G[name] ~= nil then found[#found + 1] = name end
    end
    local bytecode_ok = pcall(load, "\27Lua")
    local f = load("\27LuaT\0")
    if f ~= nil then found[#found + 1] = "bytecode" end
    if string.dump ~= nil then found[#found + 1] = "string.dump" end
    return { found = found, text_load = load("return 1 + 1")() }
  end }

sdk.tool{ name = "open_file", description = "tries io.open",
  handler = function() return io.open("/etc/passwd"):read("a") end }

sdk.tool{ name = "fine", description = "answers",
  handler = function() return "still here" end }
