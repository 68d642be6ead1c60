--[[
  Count notifications once per (countKey, recipient), for known users only (port-inbox.ts
  countInboxNotifications), and publish a live hint per counted entry.

  A user is known when their inbox hash exists (remembered, or counted before) or they have a
  registered device now. The per-user keys cannot be declared in KEYS (their number varies), so
  the caller passes them, fully built and with its client key prefix, as ARGV. Not Redis Cluster
  safe (single-instance Redis, like readRecipients-2.lua).

  Input:
    KEYS[1] announcements:active   ZSET id -> expiry (ms)

    ARGV[1] TTL of the counted marks, whole seconds
    ARGV[2] now (ms)
    ARGV[3] the hint channel (inbox:hints with the client's key prefix)
    ARGV[4] and on: five per entry: inbox_counted:{countKey}:{recipient}, inbox:{recipient},
            user_tokens:{recipient}, the type (a hash field name), the recipient pubkey

  Output:
    one entry per input entry, in order: the recipient's total new count after it when it
    counted, false (nil) when it did not (unknown user, or counted before)
]]
local rcall = redis.call
--- @include "inbox"

local ttl = ARGV[1]
local nowMs = ARGV[2]
local channel = ARGV[3]
local ids = nil
local out = {}
for i = 4, #ARGV, 5 do
  local mark, hash, tokens, countedType, pubkey = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  local known = rcall("EXISTS", hash) == 1 or rcall("SCARD", tokens) > 0
  if known and rcall("SET", mark, "1", "NX", "EX", ttl) then
    rcall("HINCRBY", hash, countedType, 1)
    if ids == nil then
      ids = activeAnnouncementIds(KEYS[1], nowMs)
    end
    local totalNew = inboxTotalNew(hash, ids)
    rcall("PUBLISH", channel, cjson.encode({ pubkey = pubkey, type = countedType, totalNew = totalNew }))
    out[#out + 1] = totalNew
  else
    out[#out + 1] = false
  end
end
return out
