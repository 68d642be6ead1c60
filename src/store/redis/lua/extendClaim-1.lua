--[[
  Compare-and-expire of a per-recipient delivery claim: give the key a new TTL only when it still
  holds the caller's owner token, so a stale attempt never extends a successor's claim.

  Input:
    KEYS[1] dedup:{eventId}:{recipient}  the claim key

    ARGV[1] owner token (uuid) stored when the claim was taken
    ARGV[2] new TTL, seconds

  Output:
    1  extended
    0  the claim expired or belongs to someone else; nothing written
]]
local rcall = redis.call
if rcall("GET", KEYS[1]) == ARGV[1] then
  return rcall("EXPIRE", KEYS[1], ARGV[2])
end
return 0
