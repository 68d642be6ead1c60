--[[
  The read position of the cluster layout (ntfy-cluster.ts): the newest id such that every id at
  or below it is settled (committed, or given up), in the sequencer slot. It is the head when
  nothing is pending, else the id allocated just before the first pending one. A reader that
  takes it first and then reads the topics up to it sees every message at or below it: that is
  the snapshot the single-server read gets from one script.

  Input:
    KEYS[1] ntfy:head:{n:seq}     STRING "ms-seq" of the newest id allocated
    KEYS[2] ntfy:pending:{n:seq}  ZSET   "<sort key> <previous entry id or -> <lease deadline ms>", score 0
    KEYS[3] ntfy:held:{n:seq}     HASH   sort key -> append event waiting for an earlier id

    ARGV[1] now, ms (store clock): pending ids past their lease are dropped first
    ARGV[2] append-event channel ("" publishes nothing); held events released here go there

  Output:
    the position "ms-seq", or false when no id was ever allocated (or the first one is pending)
]]
local rcall = redis.call
--- @include "ntfySequencer"

local front = ntfySettleFront(KEYS[2], KEYS[3], tonumber(ARGV[1]), ARGV[2])
if front == nil then
  return rcall("GET", KEYS[1])
end
local _, previous = ntfyPendingFields(front)
if previous == "-" then
  return false
end
return previous
