-- A stage handler that rewrites the reply, one that leaves its context alone, and an output
-- channel whose messages a tool reads back.
local kept = {}

sdk.stage{ stage = "before_output", priority = 5,
  handler = function(context, ctx)
    context.final_text = string.upper(context.final_text) .. " [" .. ctx.trust .. "]"
    return context
  end }

sdk.stage{ stage = "on_input", handler = function(context) end }

sdk.channel{ name = "notebook", description = "Keeps notes.", caps = { "text" },
  handler = function(message, ctx)
    kept[#kept + 1] = message.text
    return { kept = #kept }
  end }

sdk.tool{ name = "notebook_read", description = "What the notebook kept.",
  handler = function() return { notes = kept } end }
