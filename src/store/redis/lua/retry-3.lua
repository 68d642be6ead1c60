--[[
  Return a leased item to the queue, available again at a given time, recording the error of
  the failed attempt. The attempt count is kept (it counts leases, not retries).

  Input:
    KEYS[1] queue:{name}:ready   ZSET id -> available-at ms
    KEYS[2] queue:{name}:leased  ZSET id -> lease expiry ms
    KEYS[3] queue:{name}:meta    HASH id -> metadata JSON

    ARGV[1] item id
    ARGV[2] lease token
    ARGV[3] available-at, ms
    ARGV[4] error text of the failed attempt

  Output:
    1   returned to ready
    -1  NotOwner: the item is leased under another token
    -2  NotFound: the item is not leased
]]
local rcall = redis.call
--- @include "queueMeta"

local id = ARGV[1]
local meta, status = leasedMeta(KEYS[2], KEYS[3], id, ARGV[2])
if not meta then
  return status
end
meta.leaseToken = nil
meta.lastError = ARGV[4]
writeMeta(KEYS[3], id, meta)
rcall("ZREM", KEYS[2], id)
rcall("ZADD", KEYS[1], ARGV[3], id)
return 1
