--[[
  Put a group back in its outbox shard after an ingest replayed a buffered disposition (step 2
  of ingest, coalesce.ts; a fresh decision queues with a plain ZADD NX), unless it is there
  already or a flush (or a reconciliation) holds it: an existing due entry never moves, and a
  held group comes back through its holder.

  Idempotent: it repairs an ingest that failed between its two steps and changes nothing
  otherwise.

  Input:
    KEYS[1] coalesce:due     ZSET gid -> flush time (s), of the gid's shard
    KEYS[2] coalesce:leases  ZSET gid -> lease expiry (s), of the same shard

    ARGV[1] gid
    ARGV[2] due: the group's bucket deadline, unix seconds

  Output:
    1  queued now
    0  already due or held; nothing changed
]]
local rcall = redis.call

if rcall("ZSCORE", KEYS[2], ARGV[1]) then
  return 0
end
return rcall("ZADD", KEYS[1], "NX", ARGV[2], ARGV[1])
