--[[
  Append a message to an ntfy topic, allocating its globally ordered id (port-ntfy.ts).

  The id is a position (ms, seq), written as the stream entry id "ms-seq" (TypeScript turns it
  into the 12-character ntfy id). It is the store clock's millisecond when that is past the head,
  otherwise the head's next sequence number (the next millisecond when the sequence space is
  used up). Allocation and append happen in this one script, so ids rise in commit order even
  when the clocks of two writers disagree.

  Single-server path (the divine layout): the keys live in different slots in the cluster layout,
  where ntfy-cluster.ts runs the per-slot steps (allocateNtfyId-3, completeNtfyAppend-2,
  readNtfyWatermark-3, trimNtfyTopic-1) instead.

  Input:
    KEYS[1] ntfy:head             STRING "ms-seq" of the newest id allocated
    KEYS[2] ntfy:topic:{topic}    STREAM entry id "ms-seq" -> m = content JSON, x = expiry ms
    KEYS[3] ntfy:expiry           ZSET topic -> expiry ms of the topic's oldest entry
    KEYS[4] ntfy:ids              HASH entry id "ms-seq" -> topic, every stored message

    ARGV[1] now, ms (store clock)
    ARGV[2] ttl, ms (positive)
    ARGV[3] content JSON (stored as given, never decoded)
    ARGV[4] topic (the member of KEYS[3], the value in KEYS[4])
    ARGV[5] largest sequence number within one millisecond
    ARGV[6] append-event channel ("" publishes nothing); not a key, so it is passed in
    ARGV[7] "0" for ntfy's `Cache: no` (announceNtfyMessage): allocate the id, move the head and
            publish the event, but store nothing (expiry 0); anything else stores the message

  Output:
    { ms, seq, expiresMs } of the appended message (expiresMs 0 when nothing was stored)

  Emits on ARGV[6] (the append event; format in keys.ts, parsed in ntfy.ts):
    "1 <previous head "ms-seq" or -> <entry id> <expiry ms> <topic length> <topic><content JSON>"
  Publishing inside the script puts the events in commit order on the channel.

  The stream entry is written first: if XADD fails nothing else has changed.
]]
local rcall = redis.call
--- @include "ntfyNextId"

local now = tonumber(ARGV[1])
local head = rcall("GET", KEYS[1])
local previous = head or "-"
local ms, seq = ntfyNextId(head, now, tonumber(ARGV[5]))

local entryId = string.format("%.0f-%.0f", ms, seq)
local stored = ARGV[7] ~= "0"
local expiresMs = 0
if stored then expiresMs = ms + tonumber(ARGV[2]) end
local expires = string.format("%.0f", expiresMs)
if stored then
  rcall("XADD", KEYS[2], entryId, "m", ARGV[3], "x", expires)
end
rcall("SET", KEYS[1], entryId)
if stored then
  rcall("HSET", KEYS[4], entryId, ARGV[4])
  -- LT keeps the expiry of the topic's oldest entry; a new topic is added with this one's.
  rcall("ZADD", KEYS[3], "LT", expires, ARGV[4])
end
if ARGV[6] ~= "" then
  rcall("PUBLISH", ARGV[6], "1 " .. previous .. " " .. entryId .. " " .. expires .. " " .. #ARGV[4] .. " " .. ARGV[4] .. ARGV[3])
end
return { ms, seq, expiresMs }
