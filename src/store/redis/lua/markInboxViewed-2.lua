--[[
  Mark types viewed for one user (port-inbox.ts markInboxViewed): `{type}_viewed = {type}` for a
  counted type, the announcement high-water mark raised to the newest active id for
  `announcement`. Remembers the user, and publishes one hint when something changed.

  Input:
    KEYS[1] inbox:{pubkey}         HASH counters
    KEYS[2] announcements:active   ZSET id -> expiry (ms)

    ARGV[1] now (ms)
    ARGV[2] the hint channel (inbox:hints with the client's key prefix)
    ARGV[3] the pubkey (for the hint)
    ARGV[4] and on: the types to mark viewed

  Output:
    1 when some value changed, 0 otherwise
]]
local rcall = redis.call
--- @include "inbox"

local ids = activeAnnouncementIds(KEYS[2], ARGV[1])
rcall("HSETNX", KEYS[1], "known", "1")
local changedType = nil
for i = 4, #ARGV do
  local markedType = ARGV[i]
  if markedType == "announcement" then
    local newest = 0
    for _, id in ipairs(ids) do
      if tonumber(id) > newest then
        newest = tonumber(id)
      end
    end
    if newest > (tonumber(rcall("HGET", KEYS[1], "announcement")) or 0) then
      rcall("HSET", KEYS[1], "announcement", newest)
      changedType = changedType or markedType
    end
  else
    local total = tonumber(rcall("HGET", KEYS[1], markedType)) or 0
    local viewed = tonumber(rcall("HGET", KEYS[1], markedType .. "_viewed")) or 0
    if viewed ~= total then
      rcall("HSET", KEYS[1], markedType .. "_viewed", total)
      changedType = changedType or markedType
    end
  end
end
if changedType == nil then
  return 0
end
rcall("PUBLISH", ARGV[2], cjson.encode({ pubkey = ARGV[3], type = changedType, totalNew = inboxTotalNew(KEYS[1], ids) }))
return 1
