--[[
  Record an expanded page of a send (port-sends.ts): its new offset, and `done` when it was the
  last page. The first step of `advanceSend` (sends.ts); the second makes the due member due at
  once, or removes it when done.

  Input:
    KEYS[1] send:{app}:{id}     HASH request, lane, state, sendAtMs, createdAtMs, offset

    ARGV[1] the new offset
    ARGV[2] "1" when this was the last page

  Output:
    the send's lane (critical | normal | low, as stored)  recorded
    false                                                 the send is gone, cancelled or done; nothing written
]]
local rcall = redis.call

local state = rcall("HGET", KEYS[1], "state")
if state ~= "scheduled" and state ~= "started" then
  return false
end
rcall("HSET", KEYS[1], "offset", ARGV[1])
if ARGV[2] == "1" then
  rcall("HSET", KEYS[1], "state", "done")
end
return rcall("HGET", KEYS[1], "lane") or "normal"
