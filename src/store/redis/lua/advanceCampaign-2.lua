--[[
  Record an expanded campaign page (port-campaigns.ts): the new cursor and the page's counts;
  due again at once, or done and out of the schedule.

  Input:
    KEYS[1] campaigns:due        ZSET "{app}:{id}" -> due time, ms
    KEYS[2] campaign:{app}:{id}  HASH

    ARGV[1] the member "{app}:{id}"
    ARGV[2] the next cursor ("" when done)
    ARGV[3] "1" when the walk is complete
    ARGV[4] now, ms
    ARGV[5] consenting devices to add
    ARGV[6] deferred devices to add

  Output:
    1  recorded
    0  the campaign is gone or done; nothing written
]]
local rcall = redis.call

if rcall("HGET", KEYS[2], "state") ~= "running" then
  return 0
end
rcall("HSET", KEYS[2], "cursor", ARGV[2])
rcall("HINCRBY", KEYS[2], "consenting", ARGV[5])
rcall("HINCRBY", KEYS[2], "deferred", ARGV[6])
if ARGV[3] == "1" then
  rcall("HSET", KEYS[2], "state", "done")
  rcall("ZREM", KEYS[1], ARGV[1])
else
  rcall("ZADD", KEYS[1], ARGV[4], ARGV[1])
end
return 1
