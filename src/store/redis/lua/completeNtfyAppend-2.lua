--[[
  Step 3 (the last) of an ntfy append in the cluster layout (ntfy-cluster.ts), in the sequencer
  slot: the message is committed to its topic (or given up), so its id stops being pending, and
  its append event is published once every earlier id is settled: at once when it is the first
  pending id, else held and published, in id order, by the step that settles the id before it.

  Input:
    KEYS[1] ntfy:pending:{n:seq}  ZSET "<sort key> <previous entry id or -> <lease deadline ms>", score 0
    KEYS[2] ntfy:held:{n:seq}     HASH sort key -> append event waiting for an earlier id

    ARGV[1] the pending member allocateNtfyId-3.lua returned
    ARGV[2] the append event (format in keys.ts), or "" when the append was given up (nothing committed)
    ARGV[3] now, ms (store clock)
    ARGV[4] append-event channel ("" publishes nothing)

  Output:
    1  completed
    0  late: the id's lease ran out before this step, so readers may have passed it; nothing held
       or published for it (the message, if committed, is stored but live feeds may miss it)
]]
local rcall = redis.call
--- @include "ntfySequencer"

if rcall("ZREM", KEYS[1], ARGV[1]) == 0 then
  ntfySettleFront(KEYS[1], KEYS[2], tonumber(ARGV[3]), ARGV[4])
  return 0
end
if ARGV[2] ~= "" then
  local sortKey = ntfyPendingFields(ARGV[1])
  rcall("HSET", KEYS[2], sortKey, ARGV[2])
end
ntfySettleFront(KEYS[1], KEYS[2], tonumber(ARGV[3]), ARGV[4])
return 1
