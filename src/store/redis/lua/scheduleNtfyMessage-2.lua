--[[
  Keep an ntfy message for delivery when it is due (port-ntfy.ts `scheduleNtfyMessage`), divine
  layout: the entry and its place in the due index in one step. (The cluster layout writes the
  two keys, in different slots, one after the other: the index first, see ntfy-scheduled.ts.)

  Input:
    KEYS[1] ntfy:sched:{topic}  HASH scheduled id -> "<deliver at ms> <ttl ms> <content JSON>"
    KEYS[2] ntfy:due            ZSET "<scheduled id> <topic>" -> due time (ms)

    ARGV[1] scheduled id (12 characters, random)
    ARGV[2] the entry: "<deliver at ms> <ttl ms> <content JSON>"
    ARGV[3] due member "<scheduled id> <topic>"
    ARGV[4] deliver at, ms

  Output:
    1
]]
local rcall = redis.call

rcall("HSET", KEYS[1], ARGV[1], ARGV[2])
rcall("ZADD", KEYS[2], ARGV[4], ARGV[3])
return 1
