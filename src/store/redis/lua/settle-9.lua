--[[
  Settle many leased items of one queue in one atomic step. Each entry is one of:
    ack    remove the item for good;
    retry  return it to ready, available at a given time, recording the error of the failed
           attempt (the attempt count is kept: it counts leases, not retries);
    dead   move it to the dead-letter list with a reason.
  Each entry applies only if the item is still leased under its token; a lease that expired but
  was not yet handed to anyone else is still the holder's. Entries are independent: one that is
  not the caller's to settle does not stop the others.

  An item is looked for in its own lane's leased set and a retry returns it to its own lane's
  ready set (the lane is in its metadata). A retry and a dead-letter record now as a failure.

  Input:
    KEYS[1] queue:{name}:critical:ready   ZSET id -> available-at ms   (critical lane)
    KEYS[2] queue:{name}:ready            ZSET id -> available-at ms   (normal lane)
    KEYS[3] queue:{name}:low:ready        ZSET id -> available-at ms   (low lane)
    KEYS[4] queue:{name}:critical:leased  ZSET id -> lease expiry ms   (critical lane)
    KEYS[5] queue:{name}:leased           ZSET id -> lease expiry ms   (normal lane)
    KEYS[6] queue:{name}:low:leased       ZSET id -> lease expiry ms   (low lane)
    KEYS[7] queue:{name}:dead             ZSET id -> dead-at ms        (every lane)
    KEYS[8] queue:{name}:items            HASH id -> payload JSON
    KEYS[9] queue:{name}:meta             HASH id -> metadata JSON

    ARGV[1] now, ms (the dead-at score and the failure time)
    ARGV[2 ..] five values per entry:
      id, lease token, kind ("ack" | "retry" | "dead"),
      available-at ms (retry; "" otherwise), error text (retry) or reason (dead) ("" for ack)

  Output:
    one status per entry, in order:
    1   settled
    -1  NotOwner: the item is leased under another token
    -2  NotFound: the item is not leased (never was, settled already, or recovered by a later lease)
  An unknown kind or a ragged argument list is an error reply, raised before anything is written.
]]
local rcall = redis.call
--- @include "queueMeta"

local KINDS = { ack = true, retry = true, dead = true }
if (#ARGV - 1) % 5 ~= 0 then
  return redis.error_reply("settle: arguments must come in fives after now")
end
for i = 2, #ARGV, 5 do
  if not KINDS[ARGV[i + 2]] then
    return redis.error_reply("settle: unknown kind " .. tostring(ARGV[i + 2]))
  end
end

local now = ARGV[1]
local nowMs = tonumber(now)
local READY = { KEYS[1], KEYS[2], KEYS[3] }
local LEASED = { KEYS[4], KEYS[5], KEYS[6] }
local DEAD, ITEMS, META = KEYS[7], KEYS[8], KEYS[9]

-- Take a failed leased item out of its lane's leased set into `toKey` at `score`, recording
-- `text` as `field`.
local function moveOut(id, meta, field, text, toKey, score)
  meta.leaseToken = nil
  meta[field] = text
  recordFailure(meta, nowMs)
  writeMeta(META, id, meta)
  rcall("ZREM", LEASED[laneOf(meta)], id)
  rcall("ZADD", toKey, score, id)
end

local statuses = {}
for i = 2, #ARGV, 5 do
  local id, token, kind, availableAt, text = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  local meta, status = leasedMeta(LEASED, META, id, token)
  if not meta then
    statuses[#statuses + 1] = status
  else
    if kind == "ack" then
      rcall("ZREM", LEASED[laneOf(meta)], id)
      rcall("HDEL", ITEMS, id)
      rcall("HDEL", META, id)
    elseif kind == "retry" then
      moveOut(id, meta, "lastError", text, READY[laneOf(meta)], availableAt)
    else -- dead
      moveOut(id, meta, "reason", text, DEAD, now)
    end
    statuses[#statuses + 1] = 1
  end
end
return statuses
