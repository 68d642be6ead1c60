--[[
  Record an expanded campaign page (port-campaigns.ts): the new cursor and the page's counts,
  and `done` at the end of the walk. The first step of `advanceCampaign` (campaigns.ts); the
  second makes its due member due at once, or removes it when done.

  Input:
    KEYS[1] campaign:{app}:{id}  HASH

    ARGV[1] the next cursor ("" when done)
    ARGV[2] "1" when the walk is complete
    ARGV[3] consenting devices to add
    ARGV[4] deferred devices to add

  Output:
    1  recorded
    0  the campaign is gone or done; nothing written
]]
local rcall = redis.call

if rcall("HGET", KEYS[1], "state") ~= "running" then
  return 0
end
rcall("HSET", KEYS[1], "cursor", ARGV[1])
rcall("HINCRBY", KEYS[1], "consenting", ARGV[3])
rcall("HINCRBY", KEYS[1], "deferred", ARGV[4])
if ARGV[2] == "1" then
  rcall("HSET", KEYS[1], "state", "done")
end
return 1
