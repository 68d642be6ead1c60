--[[
  Deliver one claimed scheduled ntfy message (port-ntfy.ts `releaseDueNtfyMessages`), divine
  layout: append it to its topic exactly as appendNtfyMessage-4.lua appends (id from the head and
  the store clock, stream entry, id index, expiry index, append event) and forget the entry, in
  one step, so it is delivered once whoever else tries. The delivered content carries the
  scheduled id as its sequenceId already (it was stored so).

  Input:
    KEYS[1] ntfy:head             STRING "ms-seq" of the newest id allocated
    KEYS[2] ntfy:topic:{topic}    STREAM entry id "ms-seq" -> m = content JSON, x = expiry ms
    KEYS[3] ntfy:expiry           ZSET topic -> expiry ms of the topic's oldest entry
    KEYS[4] ntfy:ids              HASH entry id "ms-seq" -> topic
    KEYS[5] ntfy:sched:{topic}    HASH scheduled id -> "<deliver at ms> <ttl ms> <content JSON>"
    KEYS[6] ntfy:due              ZSET "<scheduled id> <topic>" -> due ms

    ARGV[1] now, ms (store clock)
    ARGV[2] scheduled id
    ARGV[3] topic
    ARGV[4] largest sequence number within one millisecond
    ARGV[5] append-event channel ("" publishes nothing)
    ARGV[6] due member "<scheduled id> <topic>"

  Output:
    { ms, seq, expiresMs, content JSON }  delivered
    false                                 not scheduled (already delivered, or never stored):
                                          its due member is dropped

  Emits on ARGV[5] the append event, as appendNtfyMessage-4.lua does.
]]
local rcall = redis.call
--- @include "ntfyNextId"

local entry = rcall("HGET", KEYS[5], ARGV[2])
if not entry then
  rcall("ZREM", KEYS[6], ARGV[6])
  return false
end
local _, ttl, content = string.match(entry, "^(%d+) (%d+) (.*)$")

local now = tonumber(ARGV[1])
local head = rcall("GET", KEYS[1])
local previous = head or "-"
local ms, seq = ntfyNextId(head, now, tonumber(ARGV[4]))

local entryId = string.format("%.0f-%.0f", ms, seq)
local expiresMs = ms + tonumber(ttl)
local expires = string.format("%.0f", expiresMs)
rcall("XADD", KEYS[2], entryId, "m", content, "x", expires)
rcall("SET", KEYS[1], entryId)
rcall("HSET", KEYS[4], entryId, ARGV[3])
rcall("ZADD", KEYS[3], "LT", expires, ARGV[3])
rcall("HDEL", KEYS[5], ARGV[2])
rcall("ZREM", KEYS[6], ARGV[6])
if ARGV[5] ~= "" then
  rcall("PUBLISH", ARGV[5], "1 " .. previous .. " " .. entryId .. " " .. expires .. " " .. #ARGV[3] .. " " .. ARGV[3] .. content)
end
return { ms, seq, expiresMs, content }
