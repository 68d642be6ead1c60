--[[
  Delete the expired entries at the front of one ntfy topic (the janitor, port-ntfy.ts), then
  re-index the topic by the expiry of its new oldest entry, or drop it when it is empty.

  Entries are scanned oldest first and the scan stops at the first unexpired one: with the usual
  single cache duration expiry follows append order. An entry with a shorter TTL behind a longer
  one waits for it (readers skip it meanwhile, by its expiry).

  Single-server path (the divine layout): the keys live in different slots in the cluster layout,
  where ntfy-cluster.ts runs the per-slot steps (allocateNtfyId-3, completeNtfyAppend-2,
  readNtfyWatermark-3, trimNtfyTopic-1) instead.

  Input:
    KEYS[1] ntfy:topic:{topic}   STREAM entry id "ms-seq" -> m = content JSON, x = expiry ms
    KEYS[2] ntfy:expiry          ZSET topic -> expiry ms of the topic's oldest entry
    KEYS[3] ntfy:ids             HASH entry id "ms-seq" -> topic, every stored message

    ARGV[1] now, ms (store clock)
    ARGV[2] topic (the member of KEYS[2])
    ARGV[3] most entries to delete in this call

  Output:
    { deleted, more }  more = 1 when the limit stopped the scan with expired entries left
]]
local rcall = redis.call
--- @include "ntfyStream"

local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[3])
local deleted = 0
local nextExpiry = nil
local start = "-"

while deleted < limit and not nextExpiry do
  local entries = rcall("XRANGE", KEYS[1], start, "+", "COUNT", math.min(100, limit - deleted))
  if #entries == 0 then
    break
  end
  local due = {}
  for _, entry in ipairs(entries) do
    local expiry = ntfyEntryExpiry(entry[2])
    -- An entry without a readable expiry is damaged; it is reclaimed like an expired one.
    if expiry and expiry > now then
      nextExpiry = expiry
      break
    end
    due[#due + 1] = entry[1]
  end
  if #due > 0 then
    rcall("XDEL", KEYS[1], unpack(due))
    rcall("HDEL", KEYS[3], unpack(due))
    deleted = deleted + #due
  end
  start = "-"
end

if nextExpiry then
  rcall("ZADD", KEYS[2], string.format("%.0f", nextExpiry), ARGV[2])
  return { deleted, 0 }
end
if rcall("XLEN", KEYS[1]) == 0 then
  rcall("DEL", KEYS[1])
  rcall("ZREM", KEYS[2], ARGV[2])
  return { deleted, 0 }
end
-- The limit stopped the scan: keep the topic due, so the next pass continues.
rcall("ZADD", KEYS[2], string.format("%.0f", now), ARGV[2])
return { deleted, 1 }
