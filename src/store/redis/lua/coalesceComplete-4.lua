--[[
  Finish the flush of one group (reference §8.5); only with the lease token stored by the claim.

  Input:
    KEYS[1] coalesce:g:{gid}    HASH the group
    KEYS[2] coalesce:hll:{gid}  HLL its actors
    KEYS[3] coalesce:due        ZSET gid -> flush time (s)
    KEYS[4] coalesce:leases     ZSET gid -> lease expiry (s)

    ARGV[1] gid
    ARGV[2] lease token of the claim
    ARGV[3] now, unix seconds (the store clock: the Redis server clock in production)
    ARGV[4] requeue delay, s; "" completes the group instead

  Output:
    1   completed: the group and its actors are deleted
    2   requeued: due again at now + delay, lease released
    3   expired: the requeue would reach the logical lifetime, so the group was deleted
    -1  StoreStatus.NotOwner: another lease token holds the group; nothing changed
    -2  StoreStatus.NotFound: no group record; only the lease entry was removed
]]
local rcall = redis.call
local gid = ARGV[1]

if rcall("EXISTS", KEYS[1]) == 0 then
  rcall("ZREM", KEYS[4], gid)
  return -2
end
if rcall("HGET", KEYS[1], "lease") ~= ARGV[2] then
  return -1
end
rcall("ZREM", KEYS[4], gid)

if ARGV[4] ~= "" then
  local nextAt = tonumber(ARGV[3]) + tonumber(ARGV[4])
  rcall("HDEL", KEYS[1], "lease")
  local expiresAt = tonumber(rcall("HGET", KEYS[1], "expires_at")) or 0
  if expiresAt > 0 and nextAt >= expiresAt then
    rcall("DEL", KEYS[1], KEYS[2])
    rcall("ZREM", KEYS[3], gid)
    return 3
  end
  rcall("ZADD", KEYS[3], nextAt, gid)
  return 2
end

rcall("DEL", KEYS[1], KEYS[2])
-- A stale entry (re-queued by reconciliation while this flush was late) would only dangle.
rcall("ZREM", KEYS[3], gid)
return 1
