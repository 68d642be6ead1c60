--[[
  The first step of leasing from a sharded queue, on one shard: recover the shard's expired
  leases exactly as lease-9.lua does (back to ready, or to dead after maxAttempts), then read, per
  lane, the oldest due ready items (score <= now, ascending score, ties by id) with their
  availability. Nothing is leased here: `queue-lease-plan.ts` merges the answers of every shard
  into one order per lane and tells each shard's lease-9.lua call how many of each lane to take.

  Input:
    KEYS[1] queue:{q:name:shard}:critical:ready   ZSET id -> available-at ms   (critical lane)
    KEYS[2] queue:{q:name:shard}:ready            ZSET id -> available-at ms   (normal lane)
    KEYS[3] queue:{q:name:shard}:low:ready        ZSET id -> available-at ms   (low lane)
    KEYS[4] queue:{q:name:shard}:critical:leased  ZSET id -> lease expiry ms   (critical lane)
    KEYS[5] queue:{q:name:shard}:leased           ZSET id -> lease expiry ms   (normal lane)
    KEYS[6] queue:{q:name:shard}:low:leased       ZSET id -> lease expiry ms   (low lane)
    KEYS[7] queue:{q:name:shard}:dead             ZSET id -> dead-at ms        (every lane)
    KEYS[8] queue:{q:name:shard}:meta             HASH id -> metadata JSON

    ARGV[1] now, ms
    ARGV[2] maxAttempts (>= 1)
    ARGV[3] the most due items to read per lane (>= 1)

  Output:
    {deadCount, {id, availableAtMs, id, ...} critical, {…} normal, {…} low}
    deadCount counts expired leases moved to dead by this call.
]]
local rcall = redis.call
--- @include "queueMeta"

local READY = { KEYS[1], KEYS[2], KEYS[3] }
local LEASED = { KEYS[4], KEYS[5], KEYS[6] }
local DEAD, META = KEYS[7], KEYS[8]

local now = ARGV[1]
local nowMs = tonumber(now)
local maxAttempts = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])

--- @include "queueRecovery"

recoverExpiredLeases()

local out = { deadCount }
for lane = 1, 3 do
  out[#out + 1] = rcall("ZRANGEBYSCORE", READY[lane], "-inf", now, "WITHSCORES", "LIMIT", 0, limit)
end
out[1] = deadCount
return out
