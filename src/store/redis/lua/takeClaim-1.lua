--[[
  Take a claim for `owner`, or find it already held by `owner`. Used by step 2 of claimAndEnqueue
  (deliveries.ts: an earlier call of the same delivery took it and stopped before committing) and
  by the owner-aware claims of claims.ts (claimEvent, claimRecipientDelivery with an owner: the
  same inbound item retried after a step that was applied but reported failed, issue 42). The
  claim is divine's `SET key owner NX EX ttl`; an existing claim keeps its value and lifetime.

  Input:
    KEYS[1] the claim key: dedup:{eventId}:{recipient} (`{u:RECIPIENT}` in the cluster layout),
            dedup:{eventId} (a per-event claim), or a NIP-9a receipt key

    ARGV[1] owner (an opaque token: a uuid, or an inbound item's work owner)
    ARGV[2] claim lifetime, whole seconds (> 0)

  Output:
    1  the claim is the owner's (taken now, or held already)
    0  someone else holds it; nothing written
]]
local rcall = redis.call
if rcall("SET", KEYS[1], ARGV[1], "NX", "EX", ARGV[2]) then
  return 1
end
if rcall("GET", KEYS[1]) == ARGV[1] then
  return 1
end
return 0
