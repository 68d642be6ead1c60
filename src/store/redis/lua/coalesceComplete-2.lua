--[[
  Finish the flush of one group (reference §8.5); only with the lease token stored by the claim.
  Step 1 of 2 (coalesce.ts, "complete"): the group's own record; the caller then updates the
  outbox shard with coalesceRelease-2.lua, which it does only when this step did not refuse.

  Input:
    KEYS[1] coalesce:g:{gid}    HASH the group
    KEYS[2] coalesce:hll:{gid}  HLL its actors

    ARGV[1] lease token of the claim
    ARGV[2] now, unix seconds (the store clock: the Redis server clock in production)
    ARGV[3] requeue delay, s; "" completes the group instead

  Output:
    {1, 0}       completed: the group and its actors are deleted
    {2, nextAt}  requeued: the lease token is cleared; due again at nextAt = now + delay
    {3, 0}       expired: the requeue would reach the logical lifetime, so the group was deleted
    {-1, 0}      StoreStatus.NotOwner: another lease token holds the group; nothing changed
    {-2, 0}      StoreStatus.NotFound: no group record
]]
local rcall = redis.call

if rcall("EXISTS", KEYS[1]) == 0 then
  return {-2, 0}
end
if rcall("HGET", KEYS[1], "lease") ~= ARGV[1] then
  return {-1, 0}
end

if ARGV[3] ~= "" then
  local nextAt = tonumber(ARGV[2]) + tonumber(ARGV[3])
  rcall("HDEL", KEYS[1], "lease")
  local expiresAt = tonumber(rcall("HGET", KEYS[1], "expires_at")) or 0
  if expiresAt > 0 and nextAt >= expiresAt then
    rcall("DEL", KEYS[1], KEYS[2])
    return {3, 0}
  end
  return {2, nextAt}
end

rcall("DEL", KEYS[1], KEYS[2])
return {1, 0}
