-- Stage handlers and a channel that break their budget or fail, one way each.
sdk.stage{ stage = "before_output", handler = function() while true do end end }

sdk.stage{ stage = "on_input",
  handler = function()
    local t = {}
    for i = 1, 1e9 do t[i] = string.rep("x", 1 << 20) .. i end
  end }

sdk.stage{ stage = "pre_action", handler = function() error("no actions today") end }

sdk.stage{ stage = "after_output", handler = function() return "not a context" end }

sdk.channel{ name = "pit", description = "Fails.", handler = function() error("pit is full") end }
