--[[
  Put a dead item back in the queue, available now, with its attempt count reset and its
  dead-letter reason cleared (the last error is kept for whoever looks at it next).

  Input:
    KEYS[1] queue:{name}:dead   ZSET id -> dead-at ms
    KEYS[2] queue:{name}:ready  ZSET id -> available-at ms
    KEYS[3] queue:{name}:meta   HASH id -> metadata JSON

    ARGV[1] item id
    ARGV[2] now, ms

  Output:
    1   back in ready
    -2  NotFound: no dead item with this id
]]
local rcall = redis.call
--- @include "queueMeta"

local id = ARGV[1]
if rcall("ZREM", KEYS[1], id) == 0 then
  return -2
end
local meta = readMeta(KEYS[3], id)
meta.attempts = 0
meta.reason = nil
meta.leaseToken = nil
writeMeta(KEYS[3], id, meta)
rcall("ZADD", KEYS[2], ARGV[2], id)
return 1
