--[[
  Add items to a durable queue, each unless its id is already queued, leased or dead (the items
  hash holds every item until it is acknowledged or its dead-letter entry is deleted). Entries are
  independent; a known id is skipped without touching the others.

  Input:
    KEYS[1] queue:{name}:ready  ZSET id -> available-at ms
    KEYS[2] queue:{name}:items  HASH id -> payload JSON
    KEYS[3] queue:{name}:meta   HASH id -> metadata JSON

    ARGV[1] item id                                        three values per item: the first item's
    ARGV[2] payload JSON (stored as given, never decoded)  are ARGV[1..3], the k-th item's
    ARGV[3] available-at, ms                               ARGV[3k-2..3k]

  Output:
    one value per item, in order:
    1  enqueued
    0  the id is already in the queue (queued, leased or dead), or repeated earlier in this call;
       nothing written
]]
local rcall = redis.call
--- @include "queueMeta"

local out = {}
for i = 1, #ARGV, 3 do
  local id = ARGV[i]
  if rcall("HEXISTS", KEYS[2], id) == 1 then
    out[#out + 1] = 0
  else
    rcall("HSET", KEYS[2], id, ARGV[i + 1])
    writeMeta(KEYS[3], id, { attempts = 0 })
    rcall("ZADD", KEYS[1], ARGV[i + 2], id)
    out[#out + 1] = 1
  end
end
return out
