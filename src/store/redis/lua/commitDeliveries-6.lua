--[[
  Step 3 of claimAndEnqueue (deliveries.ts), on one queue shard: for each item staged by
  stageDeliveries-3.lua, commit it (its claim is the owner's: into its lane's ready set, available
  now) or discard it (someone else holds the claim: payload and metadata removed, the id free
  again). Either applies only while the item is still staged under that owner, so a repeated or
  concurrent call does nothing more and only one caller commits a given item.

  Input:
    KEYS[1] queue:{name}:critical:ready  ZSET id -> available-at ms (critical lane)
    KEYS[2] queue:{name}:ready           ZSET id -> available-at ms (normal lane)
    KEYS[3] queue:{name}:low:ready       ZSET id -> available-at ms (low lane)
    KEYS[4] queue:{name}:items           HASH id -> payload JSON
    KEYS[5] queue:{name}:meta            HASH id -> metadata JSON (`pendingOwner` while staged)
    KEYS[6] queue:{name}:pending         ZSET id -> expiry ms of the staged item

    ARGV[1] available-at of the committed items, ms (now)
    ARGV[2 ..] three values per entry: item id, owner it was staged under, "commit" | "discard"

  Output:
    one value per entry, in order:
    1  committed by this call
    0  discarded, or not staged under that owner (committed or discarded already); nothing written
]]
local rcall = redis.call
--- @include "queueMeta"
--- @include "stagedDelivery"

local ITEMS, META, PENDING = KEYS[4], KEYS[5], KEYS[6]

local out = {}
for i = 2, #ARGV, 3 do
  local id, owner, verdict = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local meta = rcall("ZSCORE", PENDING, id) and readMeta(META, id)
  if not meta or meta.pendingOwner ~= owner then
    out[#out + 1] = 0
  elseif verdict == "commit" then
    commitStaged(META, PENDING, id, meta, ARGV[1])
    out[#out + 1] = 1
  else
    discardStaged(ITEMS, META, PENDING, id)
    out[#out + 1] = 0
  end
end
return out
