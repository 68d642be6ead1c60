--[[
  The outbox half of finishing a flush (step 2 of "complete" in coalesce.ts, after
  coalesceComplete-2.lua answered): the lease entry leaves `leases`; a requeued group is due again
  at ARGV[3]; a completed or expired group also leaves `due` (a stale entry, re-queued by a
  reconciliation while the flush was late, would only dangle); a missing group only loses its
  lease entry.

  Idempotent: ZREM and ZADD of fixed values.

  Input:
    KEYS[1] coalesce:due     ZSET gid -> flush time (s), of the gid's shard
    KEYS[2] coalesce:leases  ZSET gid -> lease expiry (s), of the same shard

    ARGV[1] gid
    ARGV[2] what the group's record step answered: "requeue", "remove" (completed, expired) or
            "unlease" (missing)
    ARGV[3] requeue time, unix seconds (with "requeue" only)

  Output:
    1
]]
local rcall = redis.call

rcall("ZREM", KEYS[2], ARGV[1])
if ARGV[2] == "requeue" then
  rcall("ZADD", KEYS[1], ARGV[3], ARGV[1])
elseif ARGV[2] == "remove" then
  rcall("ZREM", KEYS[1], ARGV[1])
end
return 1
