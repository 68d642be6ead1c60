--[[
  Compare-and-delete of a claim: delete the key only when it still holds the caller's owner
  token, so a stale attempt never releases a successor's claim.

  Input:
    KEYS[1] dedup:{eventId}:{recipient}  the claim key

    ARGV[1] owner token (uuid) stored when the claim was taken

  Output:
    1  deleted
    0  the claim expired or belongs to someone else; nothing written
]]
local rcall = redis.call
if rcall("GET", KEYS[1]) == ARGV[1] then
  return rcall("DEL", KEYS[1])
end
return 0
