--[[
  countInbox-3.lua for a whole batch of entries in one call, for the divine layout only (port-inbox.ts
  countInboxNotifications): on one Redis every recipient's keys are on the same server, so the
  entries the cluster layout counts with one script each (each in its recipient's slot) are
  counted here in one round trip, in entry order, each exactly as countInbox-3.lua counts it:
  once per (countKey, recipient), for a known user only, with a live hint when it counted.

  The keys cannot be declared (their number varies), so the caller passes them, fully built and
  with its client key prefix, in ARGV. Not Redis Cluster safe: the cluster layout never calls it
  (DIVINE_LAYOUT_ONLY_SCRIPTS).

  Input:
    KEYS: none

    ARGV[1] TTL of the counted marks, whole seconds
    ARGV[2] the hint channel (inbox:hints with the client's key prefix)
    ARGV[3] n, how many active announcement ids follow
    ARGV[4] and on: the n active announcement ids (read by the caller just before), then five
            values per entry: inbox_counted:{countKey}:{recipient} (STRING "1" once counted),
            inbox:{recipient} (HASH counters), user_tokens:{recipient} (SET of device tokens),
            the type (a hash field name), the recipient pubkey (for the hint)

  Output:
    one value per entry, in order: the recipient's total new count after the entry when it
    counted, false (nil) when it did not (unknown user, or counted before)
]]
local rcall = redis.call
--- @include "inbox"

local ttl, channel = ARGV[1], ARGV[2]
local n = tonumber(ARGV[3])
local ids = {}
for i = 4, 3 + n do
  ids[#ids + 1] = ARGV[i]
end

local out = {}
for i = 4 + n, #ARGV, 5 do
  local countedKey, inboxKey, tokensKey, countedType, recipient = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  local known = rcall("EXISTS", inboxKey) == 1 or rcall("SCARD", tokensKey) > 0
  out[#out + 1] = known and countOnce(countedKey, inboxKey, ttl, countedType, recipient, channel, ids)
end
return out
