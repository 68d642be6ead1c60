--[[
  Count one notification once per (countKey, recipient), for a known user only (port-inbox.ts
  countInboxNotifications; the caller runs it once per entry, in order), and publish a live hint
  when it counted. Every key is the recipient's ({u:PUBKEY} in the cluster layout), so the hint is
  published on the recipient's node and one user's hints keep their order.

  A user is known when their inbox hash exists (remembered, or counted before) or they have a
  registered device now.

  Input:
    KEYS[1] inbox_counted:{countKey}:{recipient}  STRING "1" once counted
    KEYS[2] inbox:{recipient}                     HASH counters
    KEYS[3] user_tokens:{recipient}               SET the recipient's device tokens

    ARGV[1] TTL of the counted mark, whole seconds
    ARGV[2] the type (a hash field name)
    ARGV[3] the recipient pubkey (for the hint)
    ARGV[4] the hint channel (inbox:hints with the client's key prefix)
    ARGV[5] and on: the ids of the active announcements (read by the caller just before)

  Output:
    the recipient's total new count after the entry when it counted, false (nil) when it did not
    (unknown user, or counted before)
]]
local rcall = redis.call
--- @include "inbox"

local known = rcall("EXISTS", KEYS[2]) == 1 or rcall("SCARD", KEYS[3]) > 0
if not known then
  return false
end
local ids = {}
for i = 5, #ARGV do
  ids[#ids + 1] = ARGV[i]
end
return countOnce(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ids)
