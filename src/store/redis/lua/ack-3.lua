--[[
  Acknowledge a leased item: remove it from the queue for good, if the lease is still ours.
  A lease that expired but was not yet handed to anyone else is still ours.

  Input:
    KEYS[1] queue:{name}:leased  ZSET id -> lease expiry ms
    KEYS[2] queue:{name}:items   HASH id -> payload JSON
    KEYS[3] queue:{name}:meta    HASH id -> metadata JSON

    ARGV[1] item id
    ARGV[2] lease token

  Output:
    1   removed
    -1  NotOwner: the item is leased under another token
    -2  NotFound: the item is not leased (never was, acknowledged, or recovered by a later lease)
]]
local rcall = redis.call
--- @include "queueMeta"

local id = ARGV[1]
local meta, status = leasedMeta(KEYS[1], KEYS[3], id, ARGV[2])
if not meta then
  return status
end
rcall("ZREM", KEYS[1], id)
rcall("HDEL", KEYS[2], id)
rcall("HDEL", KEYS[3], id)
return 1
