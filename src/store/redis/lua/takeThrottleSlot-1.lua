--[[
  Take one push slot of a user in the current throttle window (port-throttle.ts
  takeThrottleSlot): count it as pushed while the window has fewer than the limit, otherwise
  count it as withheld. The window's key is built by the caller from the store clock, so every
  process of a fleet counts into the same window.

  Input:
    KEYS[1] push_throttle:{pubkey}:{windowStartSecs}   HASH pushed, withheld

    ARGV[1] the limit of pushes in the window (1 or more)
    ARGV[2] TTL of the window's key, whole seconds (two windows: it stays readable to its end)

  Output:
    {allowed (1 or 0), pushed, withheld} after the decision
]]
local rcall = redis.call
local limit = tonumber(ARGV[1])
local pushed = tonumber(rcall("HGET", KEYS[1], "pushed") or "0")
local withheld = tonumber(rcall("HGET", KEYS[1], "withheld") or "0")
local allowed = 0
if pushed < limit then
  pushed = rcall("HINCRBY", KEYS[1], "pushed", 1)
  allowed = 1
else
  withheld = rcall("HINCRBY", KEYS[1], "withheld", 1)
end
rcall("EXPIRE", KEYS[1], ARGV[2])
return {allowed, pushed, withheld}
