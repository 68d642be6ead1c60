--[[
  Add an item to a durable queue unless its id is already queued, leased or dead (the items
  hash holds every item until it is acknowledged or its dead-letter entry is deleted).

  Input:
    KEYS[1] queue:{name}:ready  ZSET id -> available-at ms
    KEYS[2] queue:{name}:items  HASH id -> payload JSON
    KEYS[3] queue:{name}:meta   HASH id -> metadata JSON

    ARGV[1] item id
    ARGV[2] payload JSON (stored as given, never decoded)
    ARGV[3] available-at, ms

  Output:
    1  enqueued
    0  the id is already in the queue (queued, leased or dead); nothing written
]]
local rcall = redis.call
--- @include "queueMeta"

local id = ARGV[1]
if rcall("HEXISTS", KEYS[2], id) == 1 then
  return 0
end
rcall("HSET", KEYS[2], id, ARGV[2])
writeMeta(KEYS[3], id, { attempts = 0 })
rcall("ZADD", KEYS[1], ARGV[3], id)
return 1
