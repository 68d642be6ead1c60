--[[
  readRecipientsCountingInbox (deliveries.ts) in the cluster layout, for one user: what
  readRecipientSlot-3 reads (token set, removal intents, preferences) and what countInbox-3 does
  for each of the user's inbox entries, in one call. All of it is the user's slot `{u:PUBKEY}`,
  and the engine needs both at the same moment of an event's handling, so one script per user
  replaces two or more (the count was one script per entry): fewer commands for the client to
  build, write and parse. The number of keys follows the user's entries (a `-n.lua` script);
  every key is declared.

  A user is known when their inbox hash exists (remembered, or counted before) or they have a
  registered device now; an entry counts only for a known user, once per (countKey, user) mark.

  Input:
    KEYS[1] user_tokens:{u:PUBKEY}                 SET of the user's tokens
    KEYS[2] user_tokens_forgetting:{u:PUBKEY}      HASH token -> removal intent id
    KEYS[3] user_preferences:{u:PUBKEY}            STRING, preferences JSON
    KEYS[4] inbox:{u:PUBKEY}                       HASH counters
    KEYS[4 + i] for entry i = 1 … m: inbox_counted:{countKey}:{u:PUBKEY}, STRING "1" once counted

    ARGV[1] TTL of the counted marks, whole seconds
    ARGV[2] the user's pubkey (for the hint)
    ARGV[3] the hint channel (inbox:hints with the client's key prefix)
    ARGV[4] k, how many active announcement ids follow
    ARGV[5 … 4 + k] the ids of the active announcements (read by the caller just before)
    ARGV[5 + k … 4 + k + m] entry i's type (a hash field name), in KEYS order

  Output:
    {members, intents as a flat field/value array, preferences JSON or false, counts}, where
    counts holds, per entry in order, the user's total new count after it when it counted, or
    false when it did not (unknown user, or counted before: an entry repeated in the call counts
    once)
]]
local rcall = redis.call
--- @include "inbox"

local members = rcall("SMEMBERS", KEYS[1])
local read = { members, rcall("HGETALL", KEYS[2]), rcall("GET", KEYS[3]) }
local idCount = tonumber(ARGV[4])
local ids = {}
for i = 1, idCount do
  ids[i] = ARGV[4 + i]
end
local counts = {}
local known = rcall("EXISTS", KEYS[4]) == 1 or #members > 0
for i = 5, #KEYS do
  counts[#counts + 1] = known and countOnce(KEYS[i], KEYS[4], ARGV[1], ARGV[idCount + i], ARGV[2], ARGV[3], ids)
end
read[4] = counts
return read
