--[[
  Put a dead item back in its lane, available now, starting over: attempts reset, dead-letter
  reason, last error and failure times cleared.

  Input:
    KEYS[1] queue:{name}:dead            ZSET id -> dead-at ms
    KEYS[2] queue:{name}:critical:ready  ZSET id -> available-at ms (critical lane)
    KEYS[3] queue:{name}:ready           ZSET id -> available-at ms (normal lane)
    KEYS[4] queue:{name}:low:ready       ZSET id -> available-at ms (low lane)
    KEYS[5] queue:{name}:meta            HASH id -> metadata JSON

    ARGV[1] now, ms
    ARGV[2] item id to replay, or "" to replay the oldest dead items instead
    ARGV[3] with ARGV[2] = "": how many of the oldest to replay (>= 1)

  Output:
    with an id:  1 back in its lane, -2 NotFound (no dead item with this id)
    without:     the number of items replayed (0 when the list is empty)
]]
local rcall = redis.call
--- @include "queueMeta"

local now = ARGV[1]

local function replay(id)
  local meta = readMeta(KEYS[5], id)
  meta.attempts = 0
  meta.reason = nil
  meta.leaseToken = nil
  meta.lastError = nil
  meta.firstFailedAt = nil
  meta.lastFailedAt = nil
  writeMeta(KEYS[5], id, meta)
  rcall("ZADD", KEYS[1 + laneOf(meta)], now, id)
end

if ARGV[2] ~= "" then
  local id = ARGV[2]
  if rcall("ZREM", KEYS[1], id) == 0 then
    return -2
  end
  replay(id)
  return 1
end

local oldest = rcall("ZRANGE", KEYS[1], 0, tonumber(ARGV[3]) - 1)
for _, id in ipairs(oldest) do
  rcall("ZREM", KEYS[1], id)
  replay(id)
end
return #oldest
