--[[
  Claim deliveries and queue them, atomically per entry: take the per-(event, recipient) claim
  (`SET dedup:{eventId}:{recipient} owner NX EX ttl`, divine's claim) and, only when it was
  taken, enqueue the delivery exactly as enqueue-3.lua does. A claim is therefore never held
  without its delivery queued, whatever instant the caller dies at.

  The NIP-9a receiver takes its relay-POST receipts with this script too (a receipt key
  `nip9a:receipt:…` in place of the claim key, its items on the inbound queue): the same
  take-then-queue step, so a receipt is never held without its item queued either.

  The claim keys cannot be declared in KEYS (their number varies), so the caller passes them,
  fully built and with its client key prefix, in ARGV. Not Redis Cluster safe.

  Input:
    KEYS[1] queue:{name}:ready  ZSET id -> available-at ms
    KEYS[2] queue:{name}:items  HASH id -> payload JSON
    KEYS[3] queue:{name}:meta   HASH id -> metadata JSON

    ARGV[1] claim lifetime, whole seconds (> 0)
    ARGV[2] available-at of the queued items, ms
    ARGV[3 ..] four values per entry: claim key, claim owner (a fresh uuid), item id,
               payload JSON (stored as given, never decoded)

  Output:
    one value per entry, in order:
    1  claimed, and the item queued (or already queued under that id)
    0  someone holds the claim; nothing written for this entry
]]
local rcall = redis.call
--- @include "queueMeta"

local ttl = ARGV[1]
local availableAt = ARGV[2]
local out = {}
for i = 3, #ARGV, 4 do
  local claimKey, owner, id, payload = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if rcall("SET", claimKey, owner, "NX", "EX", ttl) then
    if rcall("HEXISTS", KEYS[2], id) == 0 then
      rcall("HSET", KEYS[2], id, payload)
      writeMeta(KEYS[3], id, { attempts = 0 })
      rcall("ZADD", KEYS[1], availableAt, id)
    end
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
