--[[
  Store one metric sample of a process and drop every sample older than the retention
  (port-fleet.ts).

  Input:
    KEYS[1] fleet:samples        ZSET member `{processId}|{atMs}` → at, ms
                                 (cluster layout: fleet:samples:{fleet})
    KEYS[2] fleet:sample_values  HASH the same member → values JSON
                                 (cluster layout: fleet:sample_values:{fleet}, the same slot)

    ARGV[1] process id
    ARGV[2] now, ms (the sample's time)
    ARGV[3] values JSON
    ARGV[4] retention, ms

  Output:
    the number of old samples dropped
]]
local rcall = redis.call
local now = tonumber(ARGV[2])
local cutoff = now - tonumber(ARGV[4])

local old = rcall("ZRANGEBYSCORE", KEYS[1], "-inf", "(" .. cutoff)
for i = 1, #old do
  rcall("HDEL", KEYS[2], old[i])
end
if #old > 0 then
  rcall("ZREMRANGEBYSCORE", KEYS[1], "-inf", "(" .. cutoff)
end
local member = ARGV[1] .. "|" .. ARGV[2]
rcall("ZADD", KEYS[1], now, member)
rcall("HSET", KEYS[2], member, ARGV[3])
return #old
