-- A well-behaved plugin: two tools, one keeps state between calls.
local rolls = 0

sdk.tool{
  name = "dice_roll",
  description = "Roll a die with the given number of sides.",
  parameters = { type = "object", properties = { sides = { type = "integer" } } },
  handler = function(args, ctx)
    rolls = rolls + 1
    local sides = args.sides or 6
    return { rolled = (rolls * 7) % sides + 1, rolls = rolls, task = ctx.task, trust = ctx.trust }
  end,
}

sdk.tool{
  name = "dice_echo",
  description = "Echo the arguments back.",
  handler = function(args) return args end,
}
