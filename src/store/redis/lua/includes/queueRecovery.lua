-- Included by the queue scripts that lease (not a script of its own), after "queueMeta".
-- Returns expired leases of one queue shard to their lanes, or to dead when they used up their
-- attempts. Expects the including script to define `rcall`, READY and LEASED (the lanes' keys in
-- KEYS order: critical, normal, low), DEAD, META, `now` (ms, the caller's string), `nowMs`
-- (tonumber(now)) and `maxAttempts`.

-- Bounds on the work one call does, so a backlog of expired or exhausted items cannot turn one
-- script into a long stall of the whole Redis; later calls continue where this one stopped.
local RECOVER_PER_CALL = 1000
local MAX_ATTEMPTS_REASON = "max attempts exceeded"

-- Items moved to dead by this call.
local deadCount = 0

-- A dead item's failures: an item that never failed (exhausted by a replay-less path) dies now.
local function moveToDead(id, meta)
  meta.leaseToken = nil
  meta.reason = MAX_ATTEMPTS_REASON
  if meta.lastFailedAt == nil then recordFailure(meta, nowMs) end
  writeMeta(META, id, meta)
  rcall("ZADD", DEAD, now, id)
  deadCount = deadCount + 1
end

-- In every lane, leases with expiry <= now go back to ready scored by their expiry (due at once,
-- keeping their place), the expiry recorded as a failure; one already at maxAttempts goes to dead.
local function recoverExpiredLeases()
  for lane = 1, 3 do
    local expired = rcall("ZRANGEBYSCORE", LEASED[lane], "-inf", now, "WITHSCORES", "LIMIT", 0, RECOVER_PER_CALL)
    for i = 1, #expired, 2 do
      local id = expired[i]
      rcall("ZREM", LEASED[lane], id)
      local meta = readMeta(META, id)
      recordFailure(meta, tonumber(expired[i + 1]))
      if meta.attempts >= maxAttempts then
        moveToDead(id, meta)
      else
        meta.leaseToken = nil
        writeMeta(META, id, meta)
        rcall("ZADD", READY[lane], expired[i + 1], id)
      end
    end
  end
end
