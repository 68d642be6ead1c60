--[[
  Cancel a send that has not started (port-sends.ts). The first step of `cancelSend` (sends.ts);
  the second removes its due member (a member left by a crash is dropped by the next claim,
  which finds the record cancelled).

  Input:
    KEYS[1] send:{app}:{id}     HASH request, lane, state, sendAtMs, createdAtMs, offset

    ARGV: none

  Output:
    {1, lane}  cancelled (now, or before)
    {0}        started or done: not cancellable; nothing written
    {-2}       unknown send (NotFound)
]]
local rcall = redis.call

local state = rcall("HGET", KEYS[1], "state")
if not state then
  return { -2 }
end
if state ~= "cancelled" then
  if state ~= "scheduled" then
    return { 0 }
  end
  rcall("HSET", KEYS[1], "state", "cancelled")
end
return { 1, rcall("HGET", KEYS[1], "lane") or "normal" }
