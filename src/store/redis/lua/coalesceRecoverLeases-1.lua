--[[
  Take the expired leases of one outbox shard for reconciliation (reference §8.4 step 1; claim
  step R1 in coalesce.ts): each is re-leased to the caller until ARGV[2], so no other claim
  reconciles it meanwhile, and a caller that dies before settling it leaves it to expire again.
  The group record, and the lease token in it, are not touched: the flush that held the lease can
  still complete the group until a claim takes it again.

  Input:
    KEYS[1] coalesce:leases  ZSET gid -> lease expiry (s), of one shard

    ARGV[1] now, unix seconds (the store clock: the Redis server clock in production)
    ARGV[2] the reconciliation lease's expiry, unix seconds (now + the claim's lease length)
    ARGV[3] most expired leases taken per call

  Output:
    the gids taken, earliest expiry first (possibly none)
]]
local rcall = redis.call

local expired = rcall("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, tonumber(ARGV[3]))
for _, gid in ipairs(expired) do
  rcall("ZADD", KEYS[1], ARGV[2], gid)
end
return expired
