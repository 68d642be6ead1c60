--[[
  Hand out one due campaign (port-campaigns.ts): if the member is still due and the campaign
  running, make it due again at the lease deadline. A member whose record is gone or done is
  dropped from the schedule.

  Input:
    KEYS[1] campaigns:due        ZSET "{app}:{id}" -> due time, ms
    KEYS[2] campaign:{app}:{id}  HASH

    ARGV[1] the member "{app}:{id}"
    ARGV[2] now, ms
    ARGV[3] lease deadline, ms

  Output:
    the campaign hash as a flat field/value array   claimed
    false                                           not due any more, done, or gone
]]
local rcall = redis.call

local due = rcall("ZSCORE", KEYS[1], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[2]) then
  return false
end
if rcall("HGET", KEYS[2], "state") ~= "running" then
  rcall("ZREM", KEYS[1], ARGV[1])
  return false
end
rcall("ZADD", KEYS[1], ARGV[3], ARGV[1])
return rcall("HGETALL", KEYS[2])
