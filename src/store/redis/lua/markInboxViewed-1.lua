--[[
  Mark types viewed for one user (port-inbox.ts markInboxViewed): `{type}_viewed = {type}` for a
  counted type, the announcement high-water mark raised to the newest active id for
  `announcement`. Remembers the user, and publishes one hint when something changed (on the
  user's node, like countInbox-3.lua, so the user's hints keep their order).

  Input:
    KEYS[1] inbox:{pubkey}  HASH counters

    ARGV[1] the hint channel (inbox:hints with the client's key prefix)
    ARGV[2] the pubkey (for the hint)
    ARGV[3] n: how many active announcement ids follow (read by the caller just before)
    ARGV[4] .. ARGV[3 + n] the active announcement ids
    ARGV[4 + n] and on: the types to mark viewed

  Output:
    1 when some value changed, 0 otherwise
]]
local rcall = redis.call
--- @include "inbox"

local idCount = tonumber(ARGV[3])
local ids = {}
local newest = 0
for i = 4, 3 + idCount do
  ids[#ids + 1] = ARGV[i]
  newest = math.max(newest, tonumber(ARGV[i]))
end
rcall("HSETNX", KEYS[1], "known", "1")
local changedType = nil
for i = 4 + idCount, #ARGV do
  local markedType = ARGV[i]
  if markedType == "announcement" then
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
rcall("PUBLISH", ARGV[1], cjson.encode({ pubkey = ARGV[2], type = changedType, totalNew = inboxTotalNew(KEYS[1], ids) }))
return 1
