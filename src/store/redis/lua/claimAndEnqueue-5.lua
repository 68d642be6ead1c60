--[[
  Claim deliveries and queue them, atomically per entry: take the per-(event, recipient) claim
  (`SET dedup:{eventId}:{recipient} owner NX EX ttl`, divine's claim) and, only when it was
  taken, enqueue the delivery in its lane exactly as enqueue-5.lua does. A claim is therefore
  never held without its delivery queued, whatever instant the caller dies at.

  The claim keys cannot be declared in KEYS (their number varies), so the caller passes them,
  fully built and with its client key prefix, in ARGV. Not Redis Cluster safe.

  Input:
    KEYS[1] queue:{name}:critical:ready  ZSET id -> available-at ms (critical lane)
    KEYS[2] queue:{name}:ready           ZSET id -> available-at ms (normal lane)
    KEYS[3] queue:{name}:low:ready       ZSET id -> available-at ms (low lane)
    KEYS[4] queue:{name}:items           HASH id -> payload JSON
    KEYS[5] queue:{name}:meta            HASH id -> metadata JSON

    ARGV[1] claim lifetime, whole seconds (> 0)
    ARGV[2] available-at of the queued items, ms
    ARGV[3 ..] five values per entry: claim key, claim owner (a fresh uuid), item id,
               payload JSON (stored as given, never decoded), lane ("critical" | "normal" | "low")

  Output:
    one value per entry, in order:
    1  claimed, and the item queued (or already queued under that id, in any lane)
    0  someone holds the claim; nothing written for this entry
]]
local rcall = redis.call
--- @include "queueMeta"

local ttl = ARGV[1]
local availableAt = ARGV[2]
local out = {}
for i = 3, #ARGV, 5 do
  local claimKey, owner, id, payload, laneName = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  if rcall("SET", claimKey, owner, "NX", "EX", ttl) then
    if rcall("HEXISTS", KEYS[4], id) == 0 then
      local meta = freshMeta(laneName)
      rcall("HSET", KEYS[4], id, payload)
      writeMeta(KEYS[5], id, meta)
      rcall("ZADD", KEYS[laneOf(meta)], availableAt, id)
    end
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
