--[[
  Cancel a send that has not started (port-sends.ts).

  Input:
    KEYS[1] sends:due:critical  ZSET "{app}:{id}" -> due time, ms
    KEYS[2] sends:due:normal    ZSET, the same
    KEYS[3] sends:due:low       ZSET, the same
    KEYS[4] send:{app}:{id}     HASH request, lane, state, sendAtMs, createdAtMs, offset

    ARGV[1] the member "{app}:{id}"

  Output:
    1   cancelled (now, or before)
    0   started or done: not cancellable; nothing written
    -2  unknown send (NotFound)
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
if not state then
  return -2
end
if state == "cancelled" then
  return 1
end
if state ~= "scheduled" then
  return 0
end
rcall("HSET", KEYS[4], "state", "cancelled")
removeDue(ARGV[1])
return 1
