--[[
  claimAndEnqueue (deliveries.ts) in one step, for the divine layout only: on one Redis every key
  lives on the same server, so the three one-slot steps of the cluster layout
  (stageDeliveries-3.lua, takeClaim-1.lua, commitDeliveries-6.lua) run here as one atomic script,
  one round trip instead of three (and no EVALSHA per claim). Each entry ends exactly as the
  three steps leave it:

  - its id is staged by an earlier call that never finished: the claim is taken (or found) under
    that call's owner, and the staged item committed to its lane (claim ours) or discarded;
  - its id is queued, leased or dead already: the claim is taken (or found) under this entry's
    owner, nothing queued;
  - otherwise: the claim is taken (or found) under this entry's owner and, when ours, the item is
    queued in its lane, available now; when someone else holds it nothing is written (the three
    steps would stage the item and then discard it).

  Staged items whose expiry passed are dropped first, a few per call, as step 1 does.

  The claim keys cannot be declared in KEYS (their number varies), so the caller passes them,
  fully built and with its client key prefix, in ARGV. Not Redis Cluster safe: the cluster layout
  never calls it (DIVINE_LAYOUT_ONLY_SCRIPTS).

  Input:
    KEYS[1] queue:{name}:critical:ready  ZSET id -> available-at ms (critical lane)
    KEYS[2] queue:{name}:ready           ZSET id -> available-at ms (normal lane)
    KEYS[3] queue:{name}:low:ready       ZSET id -> available-at ms (low lane)
    KEYS[4] queue:{name}:items           HASH id -> payload JSON
    KEYS[5] queue:{name}:meta            HASH id -> metadata JSON (`pendingOwner` while staged)
    KEYS[6] queue:{name}:pending         ZSET id -> expiry ms of the staged item

    ARGV[1] now, ms: the staged items' expiry horizon and the queued items' available-at
    ARGV[2] claim lifetime, whole seconds (> 0)
    ARGV[3 ..] five values per entry: claim key (prefixed), claim owner (a fresh uuid), item id,
               payload JSON (stored as given, never decoded), lane ("critical" | "normal" | "low")

  Output:
    one value per entry, in order:
    1  the claim is the entry's (or its staged owner's), and the item queued by this call or
       queued already under that id
    0  someone else holds the claim; nothing queued for this entry (an earlier call's staged
       item is discarded)
]]
local rcall = redis.call
--- @include "queueMeta"
--- @include "stagedDelivery"

local ITEMS, META, PENDING = KEYS[4], KEYS[5], KEYS[6]
local SWEEP_PER_CALL = 20
local now, ttl = ARGV[1], ARGV[2]

local expired = rcall("ZRANGEBYSCORE", PENDING, "-inf", now, "LIMIT", 0, SWEEP_PER_CALL)
for _, id in ipairs(expired) do
  rcall("ZREM", PENDING, id)
  rcall("HDEL", ITEMS, id)
  rcall("HDEL", META, id)
end

-- takeClaim-1.lua: taken now, or held already by `owner`.
local function claim(key, owner)
  if rcall("SET", key, owner, "NX", "EX", ttl) then
    return true
  end
  return rcall("GET", key) == owner
end

local out = {}
for i = 3, #ARGV, 5 do
  local claimKey, owner, id, payload, laneName = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  if rcall("HEXISTS", ITEMS, id) == 1 then
    local meta = rcall("ZSCORE", PENDING, id) and readMeta(META, id)
    local staged = meta and meta.pendingOwner
    if type(staged) ~= "string" then
      -- Queued, leased or dead already: only the claim.
      out[#out + 1] = claim(claimKey, owner) and 1 or 0
    elseif claim(claimKey, staged) then
      -- commitDeliveries-6.lua's commit of an earlier call's staged item.
      commitStaged(META, PENDING, id, meta, now)
      out[#out + 1] = 1
    else
      -- ... and its discard.
      discardStaged(ITEMS, META, PENDING, id)
      out[#out + 1] = 0
    end
  elseif claim(claimKey, owner) then
    local meta = freshMeta(laneName)
    rcall("HSET", ITEMS, id, payload)
    writeMeta(META, id, meta)
    rcall("ZADD", KEYS[laneOf(meta)], now, id)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
