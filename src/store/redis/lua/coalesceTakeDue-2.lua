--[[
  Take the earliest due entry of one outbox shard (reference §8.4 step 2; claim step C1 in
  coalesce.ts): it moves from due to leases until ARGV[2]. The caller then stores its lease token
  in the group (coalesceLeaseGroup-1.lua), or, when the group record is gone, drops the entry
  (coalesceSettleLease-2.lua). A caller that dies in between leaves the entry to expire and be
  reconciled, so the group is never lost.

  Input:
    KEYS[1] coalesce:due     ZSET gid -> flush time (s), of the shard
    KEYS[2] coalesce:leases  ZSET gid -> lease expiry (s), of the same shard

    ARGV[1] now, unix seconds (the store clock: the Redis server clock in production)
    ARGV[2] the lease's expiry, unix seconds (now + lease length)

  Output:
    the gid taken, or "" when nothing in the shard is due
]]
local rcall = redis.call

local head = rcall("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, 1)
local gid = head[1]
if not gid then
  return ""
end
rcall("ZREM", KEYS[1], gid)
rcall("ZADD", KEYS[2], ARGV[2], gid)
return gid
