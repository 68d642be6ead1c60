--[[
  The last step of forgetting something idle (issue 35): drop `member` from an idle sweep's index
  (inbox_active, nip9a:callbacks_received) only while its time is still before the cutoff, so an
  entry a request raised meanwhile stays (and the user or callback with it).

  Input:
    KEYS[1] the index shard  ZSET member -> activity, ms

    ARGV[1] the member
    ARGV[2] idle before, ms

  Output:
    1  dropped
    0  absent, or active since the cutoff; nothing written
]]
local rcall = redis.call

local score = rcall("ZSCORE", KEYS[1], ARGV[1])
if score and tonumber(score) < tonumber(ARGV[2]) then
  return rcall("ZREM", KEYS[1], ARGV[1])
end
return 0
