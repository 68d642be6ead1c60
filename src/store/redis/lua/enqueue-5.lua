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

local readyKeys = { KEYS[1], KEYS[2], KEYS[3] }
local out = {}
for i = 1, #ARGV, 4 do
  out[#out + 1] = addItem(KEYS[4], KEYS[5], readyKeys, ARGV[i], ARGV[i + 1], freshMeta(ARGV[i + 3]), ARGV[i + 2])
end
return out
