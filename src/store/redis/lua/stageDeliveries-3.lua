--[[
  Step 1 of claimAndEnqueue (deliveries.ts), on one queue shard: stage each delivery under the
  owner of the claim that will cover it, unless its id is already in the queue. A staged item
  holds its id (so no other enqueue takes it) but sits in no lane: nothing leases it until step 3
  commits it. An id staged by an earlier call that never finished (a crash, an error) is kept
  with its owner and payload, and that owner is returned, so the retry takes (or finds) the claim
  under the same owner and commits the same item: a crash between the steps loses nothing and
  doubles nothing.

  Staged items whose expiry passed (their claim has expired too, so nothing waits for them) are
  dropped, a few per call.

  Input:
    KEYS[1] queue:{name}:items    HASH id -> payload JSON
    KEYS[2] queue:{name}:meta     HASH id -> metadata JSON (`pendingOwner` while staged)
    KEYS[3] queue:{name}:pending  ZSET id -> expiry ms of the staged item

    ARGV[1] now, ms
    ARGV[2] expiry of the items staged now, ms (now + the claim lifetime)
    ARGV[3 ..] four values per entry: item id, claim owner (a fresh uuid), payload JSON (stored
               as given, never decoded), lane ("critical" | "normal" | "low")

  Output:
    one value per entry, in order:
    the owner the item is staged under (this entry's, or the earlier call's), or
    ""  the id is queued, leased or dead already (not staged; nothing written)
]]
local rcall = redis.call
--- @include "queueMeta"

local ITEMS, META, PENDING = KEYS[1], KEYS[2], KEYS[3]
local SWEEP_PER_CALL = 20

local expired = rcall("ZRANGEBYSCORE", PENDING, "-inf", ARGV[1], "LIMIT", 0, SWEEP_PER_CALL)
for _, id in ipairs(expired) do
  rcall("ZREM", PENDING, id)
  rcall("HDEL", ITEMS, id)
  rcall("HDEL", META, id)
end

local out = {}
for i = 3, #ARGV, 4 do
  local id, owner, payload, laneName = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if rcall("HEXISTS", ITEMS, id) == 1 then
    local staged = rcall("ZSCORE", PENDING, id) and readMeta(META, id).pendingOwner
    if type(staged) == "string" then
      out[#out + 1] = staged
    else
      out[#out + 1] = ""
    end
  else
    local meta = freshMeta(laneName)
    meta.pendingOwner = owner
    rcall("HSET", ITEMS, id, payload)
    writeMeta(META, id, meta)
    rcall("ZADD", PENDING, ARGV[2], id)
    out[#out + 1] = owner
  end
end
return out
