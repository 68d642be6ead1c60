--[[
  Decide what becomes of one group whose lease expired (reference §8.4 step 1; claim step R2 in
  coalesce.ts). A group with pending work past its logical lifetime is deleted and reported
  expired; one with pending work before it is reported for requeueing at its deadline; a group
  with nothing pending (or none at all) is deleted: nothing pending is not work and is never
  re-queued. The caller settles the shard's lease entry with coalesceSettleLease-2.lua.

  Idempotent: run again it finds the same record (requeue) or none (drop, counted nowhere).

  Input:
    KEYS[1] coalesce:g:{gid}    HASH the group
    KEYS[2] coalesce:hll:{gid}  HLL its actors

    ARGV[1] now, unix seconds (the store clock: the Redis server clock in production)

  Output:
    {1, 0}    dropped: nothing pending; the group (if any) is deleted
    {2, due}  requeue the gid at due (its `due` field, or now when it has none)
    {3, 0}    expired: pending work past the logical lifetime; the group is deleted
]]
local rcall = redis.call

local now = tonumber(ARGV[1])
local fields = rcall("HMGET", KEYS[1], "pending", "expires_at", "due")
local pending = tonumber(fields[1]) or 0
if pending <= 0 then
  rcall("DEL", KEYS[1], KEYS[2])
  return {1, 0}
end
local expiresAt = tonumber(fields[2]) or 0
if expiresAt > 0 and now >= expiresAt then
  rcall("DEL", KEYS[1], KEYS[2])
  return {3, 0}
end
return {2, tonumber(fields[3]) or now}
