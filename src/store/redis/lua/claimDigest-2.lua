--[[
  Hand out a due quiet-hours digest (port-quiet-hours.ts): if the user's digest is still due,
  make it due again at the lease deadline and return its counts.

  Input:
    KEYS[1] digests:due      ZSET pubkey -> due, ms (cluster: digests:due:{d:S}, the pubkey's shard: one slot)
    KEYS[2] digest:{pubkey}  HASH type -> count (cluster: digest:{d:S}:PUBKEY)

    ARGV[1] pubkey
    ARGV[2] now, ms
    ARGV[3] lease deadline, ms

  Output:
    the digest hash as a flat type/count array   claimed
    false                                        not due any more (another worker took it)
]]
local rcall = redis.call

local due = rcall("ZSCORE", KEYS[1], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[2]) then
  return false
end
rcall("ZADD", KEYS[1], ARGV[3], ARGV[1])
return rcall("HGETALL", KEYS[2])
