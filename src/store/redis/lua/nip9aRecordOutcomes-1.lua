--[[
  Record terminal NIP-9a delivery outcomes, keeping at most a number of entries and none older
  than a maximum age (port-nip9a-gateway.ts: recordNip9aOutcomes).

  Input:
    KEYS[1] nip9a:outcomes   ZSET delivery key -> recorded at (ms)

    ARGV[1] now (ms)
    ARGV[2] most entries kept
    ARGV[3] longest age kept (ms)
    ARGV[4..] delivery keys

  Output:
    one number per delivery key, in order: 1 when recorded now, 0 when it was already recorded
    (a key given twice: 1 for its first place, 0 for the second)
]]
local rcall = redis.call

local now = tonumber(ARGV[1])
rcall("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - tonumber(ARGV[3]))
local added = {}
for i = 4, #ARGV do
  added[#added + 1] = rcall("ZADD", KEYS[1], "NX", now, ARGV[i])
end
-- One trim for the whole call: the oldest go first, as with a trim after each add.
local excess = rcall("ZCARD", KEYS[1]) - tonumber(ARGV[2])
if excess > 0 then
  rcall("ZREMRANGEBYRANK", KEYS[1], 0, excess - 1)
end
return added
