-- Reverse calls: one its manifest grants, one it does not, and a flood.
sdk.tool{ name = "search", description = "Searches memory.",
  handler = function(args) return { items = sdk.memory_search(args.query, 2) } end }

sdk.tool{ name = "sources", description = "Lists the LLM sources.",
  handler = function() return sdk.call("llm.listSources", {}) end }

sdk.tool{ name = "register", description = "Tries a registration by hand.",
  handler = function() return sdk.call("stage.register", { stage = "on_input" }) end }

sdk.tool{ name = "flood", description = "Calls until stopped.",
  handler = function()
    local n = 0
    while true do
      sdk.call("memory.search", { query = "again" })
      n = n + 1
    end
  end }

sdk.stage{ stage = "before_output",
  handler = function(context)
    local items = sdk.memory_search("recent", 1)
    context.final_text = context.final_text .. " / " .. items[1].text
    return context
  end }
