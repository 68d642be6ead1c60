--[[
  Hand out one due send (port-sends.ts): if the member is still due, move the send to `started`
  and make it due again at the lease deadline, in one step (so a cancel and a claim cannot both
  win). A member whose record has gone (expired) is dropped from the schedule.

  Input:
    KEYS[1] sends:due:{lane} ZSET "{app}:{id}" -> due time, ms (the lane the member was found in)
    KEYS[2] send:{app}:{id}  HASH request, lane, state, sendAtMs, createdAtMs, offset

    ARGV[1] the member "{app}:{id}"
    ARGV[2] now, ms
    ARGV[3] lease deadline, ms

  Output:
    {request, sendAtMs, createdAtMs, offset}  claimed (state is now `started`)
    false                                     not due any more (another worker took it, or it was
                                              cancelled or completed meanwhile), or the record is gone
]]
local rcall = redis.call

local due = rcall("ZSCORE", KEYS[1], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[2]) then
  return false
end
local fields = rcall("HMGET", KEYS[2], "request", "state", "sendAtMs", "createdAtMs", "offset")
if not fields[1] then
  rcall("ZREM", KEYS[1], ARGV[1])
  return false
end
if fields[2] ~= "scheduled" and fields[2] ~= "started" then
  rcall("ZREM", KEYS[1], ARGV[1])
  return false
end
rcall("HSET", KEYS[2], "state", "started")
rcall("ZADD", KEYS[1], ARGV[3], ARGV[1])
return { fields[1], fields[3], fields[4], fields[5] }
