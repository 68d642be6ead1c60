--[[
  Settle an outbox lease a claim took for reconciliation or found dangling (claim steps R3 and C3
  in coalesce.ts): only while the lease entry still carries the expiry this claim gave it, it
  leaves `leases`, and with ARGV[3] the gid goes back to `due` there (never moving an entry that
  is due already). Any other expiry means somebody settled it since (a late flush completed the
  group, another claim took it): nothing is changed, so a retry or a race changes nothing twice.

  Input:
    KEYS[1] coalesce:due     ZSET gid -> flush time (s), of the gid's shard
    KEYS[2] coalesce:leases  ZSET gid -> lease expiry (s), of the same shard

    ARGV[1] gid
    ARGV[2] the lease expiry this claim set, unix seconds
    ARGV[3] when to queue the gid again, unix seconds; "" drops it

  Output:
    1  settled
    0  the entry had changed hands; nothing changed
]]
local rcall = redis.call

local held = rcall("ZSCORE", KEYS[2], ARGV[1])
if not held or tonumber(held) ~= tonumber(ARGV[2]) then
  return 0
end
rcall("ZREM", KEYS[2], ARGV[1])
if ARGV[3] ~= "" then
  rcall("ZADD", KEYS[1], "NX", ARGV[3], ARGV[1])
end
return 1
