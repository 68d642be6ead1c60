--[[
  Step 1 of an ntfy append in the cluster layout (ntfy-cluster.ts): allocate the message's
  globally ordered id in the sequencer slot and mark it pending until the message is committed to
  its topic (step 2, another slot) and completed (completeNtfyAppend-2.lua). Readers never read
  past the first pending id, so a message committed after a reader moved on cannot have an id the
  reader has passed.

  The id is a position (ms, seq), written as the stream entry id "ms-seq": the store clock's
  millisecond when that is past the head, otherwise the head's next sequence number (the next
  millisecond when the sequence space is used up), as appendNtfyMessage-4.lua allocates.

  Input:
    KEYS[1] ntfy:head:{n:seq}     STRING "ms-seq" of the newest id allocated
    KEYS[2] ntfy:pending:{n:seq}  ZSET   "<sort key> <previous entry id or -> <lease deadline ms>", score 0
    KEYS[3] ntfy:held:{n:seq}     HASH   sort key -> append event waiting for an earlier id

    ARGV[1] now, ms (store clock)
    ARGV[2] largest sequence number within one millisecond
    ARGV[3] pending lease, ms: how long the id may stay uncommitted before readers pass it
    ARGV[4] append-event channel ("" publishes nothing); held events released here go there

  Output:
    { ms, seq, previous entry id or "-", pending member }
]]
local rcall = redis.call
--- @include "ntfySequencer"
--- @include "ntfyNextId"

local now = tonumber(ARGV[1])
ntfySettleFront(KEYS[2], KEYS[3], now, ARGV[4])

local head = rcall("GET", KEYS[1])
local previous = head or "-"
local ms, seq = ntfyNextId(head, now, tonumber(ARGV[2]))

local entryId = string.format("%.0f-%.0f", ms, seq)
rcall("SET", KEYS[1], entryId)
local member = ntfySortKey(ms, seq) .. " " .. previous .. " " .. string.format("%.0f", now + tonumber(ARGV[3]))
rcall("ZADD", KEYS[2], 0, member)
return { ms, seq, previous, member }
