--[[
  Delete the expired entries at the front of one ntfy topic, in the topic's slot (the janitor of
  the cluster layout, ntfy-cluster.ts). The caller then removes the deleted ids from their id
  index shards and re-indexes the topic's expiry (other slots): a crash in between leaves index
  entries that point at nothing (the id lookup checks the stream; the janitor visits the topic
  again), never a stored message without its index.

  Entries are scanned oldest first and the scan stops at the first unexpired one: with the usual
  single cache duration expiry follows append order (as expireNtfyTopic-3.lua does).

  Input:
    KEYS[1] ntfy:topic:{t:TOPIC}  STREAM entry id "ms-seq" -> m = content JSON, x = expiry ms

    ARGV[1] now, ms (store clock)
    ARGV[2] most entries to delete in this call

  Output:
    { next, deleted entry id, ... } where next is the expiry (ms) of the new oldest entry,
    0 when the topic is now empty (its key deleted), -1 when the limit stopped the scan with
    expired entries left
]]
local rcall = redis.call
--- @include "ntfyStream"

local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local deleted = {}
local nextExpiry = nil

while #deleted < limit and not nextExpiry do
  local entries = rcall("XRANGE", KEYS[1], "-", "+", "COUNT", math.min(100, limit - #deleted))
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
    deleted[#deleted + 1] = entry[1]
  end
  if #due > 0 then
    rcall("XDEL", KEYS[1], unpack(due))
  end
end

local out = { 0 }
if nextExpiry then
  out[1] = string.format("%.0f", nextExpiry)
elseif rcall("XLEN", KEYS[1]) == 0 then
  rcall("DEL", KEYS[1])
else
  out[1] = -1
end
for _, id in ipairs(deleted) do
  out[#out + 1] = id
end
return out
