--[[
  Hold one push for a user's quiet-hours digest (port-quiet-hours.ts): count it, and make the
  digest due at the window's end unless it is due earlier already.

  Input:
    KEYS[1] digest:{pubkey}  HASH type -> count (cluster: digest:{d:S}:PUBKEY)
    KEYS[2] digests:due      ZSET pubkey -> due, ms (cluster: digests:due:{d:S}, the pubkey's shard: one slot)

    ARGV[1] pubkey
    ARGV[2] notification type
    ARGV[3] release time, ms

  Output:
    1
]]
local rcall = redis.call

rcall("HINCRBY", KEYS[1], ARGV[2], 1)
local due = rcall("ZSCORE", KEYS[2], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[3]) then
  rcall("ZADD", KEYS[2], ARGV[3], ARGV[1])
end
return 1
