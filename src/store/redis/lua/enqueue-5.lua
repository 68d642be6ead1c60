--[[
  Add items to a durable queue, each in its lane, unless its id is already queued, leased or dead
  in any lane of the queue (the items hash holds every item of every lane until it is
  acknowledged or its dead-letter entry is deleted). Entries are independent; a known id is
  skipped without touching the others.

  Input:
    KEYS[1] queue:{name}:critical:ready  ZSET id -> available-at ms (critical lane)
    KEYS[2] queue:{name}:ready           ZSET id -> available-at ms (normal lane)
    KEYS[3] queue:{name}:low:ready       ZSET id -> available-at ms (low lane)
    KEYS[4] queue:{name}:items           HASH id -> payload JSON
    KEYS[5] queue:{name}:meta            HASH id -> metadata JSON

    ARGV[1] item id                                        four values per item: the first item's
    ARGV[2] payload JSON (stored as given, never decoded)  are ARGV[1..4], the k-th item's
    ARGV[3] available-at, ms                               ARGV[4k-3..4k]
    ARGV[4] lane: "critical" | "normal" | "low"

  Output:
    one value per item, in order:
    1  enqueued
    0  the id is already in the queue (queued, leased or dead, in any lane), or repeated earlier
       in this call; nothing written
]]
local rcall = redis.call
--- @include "queueMeta"

local out = {}
for i = 1, #ARGV, 4 do
  local id = ARGV[i]
  if rcall("HEXISTS", KEYS[4], id) == 1 then
    out[#out + 1] = 0
  else
    local meta = freshMeta(ARGV[i + 3])
    rcall("HSET", KEYS[4], id, ARGV[i + 1])
    writeMeta(KEYS[5], id, meta)
    rcall("ZADD", KEYS[laneOf(meta)], ARGV[i + 2], id)
    out[#out + 1] = 1
  end
end
return out
