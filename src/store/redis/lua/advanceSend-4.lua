--[[
  Record an expanded page of a send (port-sends.ts): its new offset, and either due again at once
  or, when it is the last page, `done` and out of the schedule.

  Input:
    KEYS[1] sends:due:critical  ZSET "{app}:{id}" -> due time, ms
    KEYS[2] sends:due:normal    ZSET, the same
    KEYS[3] sends:due:low       ZSET, the same
    KEYS[4] send:{app}:{id}     HASH request, lane, state, sendAtMs, createdAtMs, offset

    ARGV[1] the member "{app}:{id}"
    ARGV[2] the new offset
    ARGV[3] "1" when this was the last page
    ARGV[4] now, ms

  Output:
    1  recorded
    0  the send is gone, cancelled or done; nothing written
]]
local rcall = redis.call

-- The due key of a lane (an unknown lane, from a damaged record, is normal's).
local function dueKeyOf(lane)
  if lane == "critical" then return KEYS[1] end
  if lane == "low" then return KEYS[3] end
  return KEYS[2]
end

local function removeDue(member)
  rcall("ZREM", KEYS[1], member)
  rcall("ZREM", KEYS[2], member)
  rcall("ZREM", KEYS[3], member)
end

local state = rcall("HGET", KEYS[4], "state")
if state ~= "scheduled" and state ~= "started" then
  return 0
end
rcall("HSET", KEYS[4], "offset", ARGV[2])
if ARGV[3] == "1" then
  rcall("HSET", KEYS[4], "state", "done")
  removeDue(ARGV[1])
else
  rcall("ZADD", dueKeyOf(rcall("HGET", KEYS[4], "lane")), ARGV[4], ARGV[1])
end
return 1
