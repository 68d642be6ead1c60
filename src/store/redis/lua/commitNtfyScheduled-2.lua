--[[
  Step 2 of delivering a scheduled ntfy message in the cluster layout (ntfy-scheduled.ts), in the
  topic's slot: commit the message under the id allocateNtfyId-3.lua allocated and forget the
  entry, in one step, so it is delivered once whoever else tries. The stream entry is written
  first: if XADD fails (a later id of the topic committed first) nothing has changed and the
  caller allocates again.

  Input:
    KEYS[1] ntfy:topic:{t:TOPIC}  STREAM entry id "ms-seq" -> m = content JSON, x = expiry ms
    KEYS[2] ntfy:sched:{t:TOPIC}  HASH scheduled id -> "<deliver at ms> <ttl ms> <content JSON>"

    ARGV[1] scheduled id
    ARGV[2] the allocated entry id "ms-seq"
    ARGV[3] the message's expiry, ms (the allocated id's ms plus the entry's TTL)

  Output:
    1      committed
    false                        not scheduled any more (delivered by another process): nothing written
]]
local rcall = redis.call

local entry = rcall("HGET", KEYS[2], ARGV[1])
if not entry then
  return false
end
local _, _, content = string.match(entry, "^(%d+) (%d+) (.*)$")
rcall("XADD", KEYS[1], ARGV[2], "m", content, "x", ARGV[3])
rcall("HDEL", KEYS[2], ARGV[1])
return 1
