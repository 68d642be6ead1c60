--[[
  Record a terminal NIP-9a delivery outcome, keeping at most a number of entries and none older
  than a maximum age (port-nip9a-gateway.ts).

  Input:
    KEYS[1] nip9a:outcomes   ZSET delivery key -> recorded at (ms)

    ARGV[1] delivery key
    ARGV[2] now (ms)
    ARGV[3] most entries kept
    ARGV[4] longest age kept (ms)

  Output:
    1 when recorded now, 0 when it was already recorded
]]
local rcall = redis.call

local now = tonumber(ARGV[2])
rcall("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - tonumber(ARGV[4]))
local added = rcall("ZADD", KEYS[1], "NX", now, ARGV[1])
local excess = rcall("ZCARD", KEYS[1]) - tonumber(ARGV[3])
if excess > 0 then
  rcall("ZREMRANGEBYRANK", KEYS[1], 0, excess - 1)
end
return added
