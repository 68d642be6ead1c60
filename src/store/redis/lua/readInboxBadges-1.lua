--[[
  The total new count (the badge) of many users in one step (port-inbox.ts readInboxBadges).
  The per-user hashes are passed, fully built, as ARGV (their number varies).

  Input:
    KEYS[1] announcements:active   ZSET id -> expiry (ms)

    ARGV[1] now (ms)
    ARGV[2] and on: inbox:{pubkey} of each user, in order

  Output:
    one integer per user, in order
]]
local rcall = redis.call
--- @include "inbox"

local ids = activeAnnouncementIds(KEYS[1], ARGV[1])
local out = {}
for i = 2, #ARGV do
  out[#out + 1] = inboxTotalNew(ARGV[i], ids)
end
return out
