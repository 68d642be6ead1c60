--[[
  Read one ntfy topic after a cursor, with the head, in one atomic step (port-ntfy.ts). The
  common subscription is one topic (one app on one phone); this is its read in a single round
  trip. Reads of several topics run the same commands in a MULTI instead (their keys vary).

  Input:
    KEYS[1] ntfy:head             STRING "ms-seq" of the newest id allocated
    KEYS[2] ntfy:topic:{topic}    STREAM entry id "ms-seq" -> m = content JSON, x = expiry ms

    ARGV[1] first entry id to return ("-" for the start), inclusive
    ARGV[2] most entries to return

  Output:
    { head or false, entries }  entries as XRANGE returns them: { { id, { field, value, ... } }, ... }
]]
local rcall = redis.call

local head = rcall("GET", KEYS[1])
local entries = rcall("XRANGE", KEYS[2], ARGV[1], "+", "COUNT", ARGV[2])
return { head, entries }
