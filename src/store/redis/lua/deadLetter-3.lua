--[[
  Move a leased item to the dead-letter list with a reason, if the lease is still ours.

  Input:
    KEYS[1] queue:{name}:leased  ZSET id -> lease expiry ms
    KEYS[2] queue:{name}:dead    ZSET id -> dead-at ms
    KEYS[3] queue:{name}:meta    HASH id -> metadata JSON

    ARGV[1] item id
    ARGV[2] lease token
    ARGV[3] reason
    ARGV[4] now, ms

  Output:
    1   dead-lettered
    -1  NotOwner: the item is leased under another token
    -2  NotFound: the item is not leased
]]
local rcall = redis.call
--- @include "queueMeta"

local id = ARGV[1]
local meta, status = leasedMeta(KEYS[1], KEYS[3], id, ARGV[2])
if not meta then
  return status
end
meta.leaseToken = nil
meta.reason = ARGV[3]
writeMeta(KEYS[3], id, meta)
rcall("ZREM", KEYS[1], id)
rcall("ZADD", KEYS[2], ARGV[4], id)
return 1
