--[[
  Add items to a durable queue already leased to the caller (port.ts: enqueueLeased), each in its
  lane, unless its id is already queued, leased or dead in any lane of the queue: as enqueue-5
  followed by a lease of exactly these items, in one step. A new item gets attempts 1, its lease
  token and its lane's leased set scored by the lease expiry, so a lease call never hands it out
  before the expiry and recovers it after, as any other lease.

  Input:
    KEYS[1] queue:{name}:critical:leased  ZSET id -> lease expiry ms (critical lane)
    KEYS[2] queue:{name}:leased           ZSET id -> lease expiry ms (normal lane)
    KEYS[3] queue:{name}:low:leased       ZSET id -> lease expiry ms (low lane)
    KEYS[4] queue:{name}:items            HASH id -> payload JSON
    KEYS[5] queue:{name}:meta             HASH id -> metadata JSON
    (all of one shard: `queue:{name}` is `queue:{q:name:shard}` in the cluster layout)

    ARGV[1] lease expiry, ms (now + lease length)
    ARGV[2..] four values per item: id, payload JSON (stored as given, never decoded),
            lane ("critical" | "normal" | "low"), lease token (fresh, made by the caller)

  Output:
    one value per item, in order:
    1  enqueued, leased under its token
    0  the id is already in the queue (queued, leased or dead, in any lane), or repeated earlier
       in this call; nothing written
]]
local rcall = redis.call
--- @include "queueMeta"

local leasedKeys = { KEYS[1], KEYS[2], KEYS[3] }
local expiry = ARGV[1]
local out = {}
for i = 2, #ARGV, 4 do
  local meta = freshMeta(ARGV[i + 2])
  meta.attempts = 1
  meta.leaseToken = ARGV[i + 3]
  out[#out + 1] = addItem(KEYS[4], KEYS[5], leasedKeys, ARGV[i], ARGV[i + 1], meta, expiry)
end
return out
