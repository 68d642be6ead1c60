-- Included by the inbox scripts (not a script of its own): countInbox, countInboxMany,
-- readAndCountRecipientSlot, markInboxViewed.
-- Expects `rcall` to be defined by the including script.
--   inbox:{pubkey}          HASH  {type} / {type}_viewed per counted type, announcement = high-water id
-- The active announcement ids live in another slot: the caller reads them and passes them in.

-- The counted types: INBOX_TYPES of port-inbox.ts without `announcement`. Keep in step with it
-- (the contract test counts every type).
local COUNTED_TYPES = { "like", "comment", "mention", "repost", "newPost", "directMessage", "keyword", "relayEvent", "reply", "zap" }

-- How many of `ids` are above the high-water mark `highWater` (a number).
local function countAbove(ids, highWater)
  local n = 0
  for _, id in ipairs(ids) do
    if tonumber(id) > highWater then
      n = n + 1
    end
  end
  return n
end

-- The user's total new count: sum over counted types of max(total - viewed, 0), plus the active
-- announcements above their high-water mark. `ids` are the active announcement ids.
local function inboxTotalNew(hashKey, ids)
  local fields = {}
  for _, t in ipairs(COUNTED_TYPES) do
    fields[#fields + 1] = t
    fields[#fields + 1] = t .. "_viewed"
  end
  fields[#fields + 1] = "announcement"
  local values = rcall("HMGET", hashKey, unpack(fields))
  local sum = 0
  for i = 1, #COUNTED_TYPES do
    local total = tonumber(values[2 * i - 1]) or 0
    local viewed = tonumber(values[2 * i]) or 0
    if total > viewed then
      sum = sum + total - viewed
    end
  end
  return sum + countAbove(ids, tonumber(values[#fields]) or 0)
end

-- One count of a known user's notification: take its (countKey, recipient) mark for `ttl`
-- seconds, add one to `countedType` and publish the hint with the new total. Returns the new total
-- new count, or false when the mark was held already (counted before, or repeated in the call).
local function countOnce(markKey, hashKey, ttl, countedType, recipient, channel, ids)
  if not rcall("SET", markKey, "1", "NX", "EX", ttl) then
    return false
  end
  rcall("HINCRBY", hashKey, countedType, 1)
  local totalNew = inboxTotalNew(hashKey, ids)
  rcall("PUBLISH", channel, cjson.encode({ pubkey = recipient, type = countedType, totalNew = totalNew }))
  return totalNew
end
