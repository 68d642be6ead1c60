--[[
  Read many ranges of ntfy topics after their cursors, with the head, in one atomic step
  (port-ntfy.ts, readNtfyMessages and readNtfyMessagesMany): every read of an event-loop turn,
  whatever its topics and cursor, is answered from one snapshot by one command, so the head and
  the entries agree (what lets a complete read move an idle cursor up to the head).

  The topic keys cannot be declared in KEYS (their number varies with the reads), so the caller
  passes them, fully built and with its client key prefix, in ARGV.

  Single-server path (the divine layout): the keys live in different slots in the cluster layout,
  where ntfy-cluster.ts runs the per-slot steps (allocateNtfyId-3, completeNtfyAppend-2,
  readNtfyWatermark-3, trimNtfyTopic-1) instead.

  Input:
    KEYS[1] ntfy:head             STRING "ms-seq" of the newest id allocated

    ARGV[1] the first range's topic key, ntfy:topic:{topic}   } three values per range: the k-th
    ARGV[2] the first range's first entry id, inclusive ("-") } range's key, first entry id and
    ARGV[3] the first range's most entries to return          } count are ARGV[3k-2] … ARGV[3k]

  Output:
    { head or false, entries of range 1, entries of range 2, ... }, entries as XRANGE returns
    them: { { id, { field, value, ... } }, ... } (m = content JSON, x = expiry ms)
]]
local rcall = redis.call

local out = { rcall("GET", KEYS[1]) }
for i = 1, #ARGV, 3 do
  out[#out + 1] = rcall("XRANGE", ARGV[i], ARGV[i + 1], "+", "COUNT", ARGV[i + 2])
end
return out
