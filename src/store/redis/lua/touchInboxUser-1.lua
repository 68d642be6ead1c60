--[[
  Remember a user and record that they were active today (port-inbox.ts rememberInboxUser, issue
  35): the user's hash gets known = 1 and `active` = the day, raised only. Returns whether the day
  was raised, so the caller writes the activity index (inbox_active, another slot in the cluster)
  once a day per user and not on every request.

  Input:
    KEYS[1] inbox:{pubkey}  HASH counters, known, active

    ARGV[1] the start of today, ms

  Output:
    1  the activity day was raised (the caller raises the index entry to it)
    0  it was today already; nothing but known (if it was missing) written
]]
local rcall = redis.call

rcall("HSETNX", KEYS[1], "known", "1")
local active = tonumber(rcall("HGET", KEYS[1], "active") or "0") or 0
if active < tonumber(ARGV[1]) then
  rcall("HSET", KEYS[1], "active", ARGV[1])
  return 1
end
return 0
