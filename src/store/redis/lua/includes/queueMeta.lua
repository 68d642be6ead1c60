-- Included by the queue scripts (not a script of its own). Reads and writes the metadata JSON
-- of one queue item, `queue:{name}:meta` field {id} =
-- {attempts, leaseToken?, lastError?, reason?, lane?, firstFailedAt?, lastFailedAt?}
-- (lane "critical" or "low"; absent means normal, so items of before the lanes are normal ones;
-- failure times in ms, see port-dlq.ts).
-- The payload lives in `queue:{name}:items` and is never decoded here, so cjson cannot reshape
-- it (cjson turns [] into {} and rounds numbers to 14 digits).
-- Expects `rcall` to be defined by the including script.

-- Missing or corrupt metadata reads as a fresh item (0 attempts) rather than wedging the queue.
local function readMeta(metaKey, id)
  local raw = rcall("HGET", metaKey, id)
  local meta = {}
  if raw then
    local ok, decoded = pcall(cjson.decode, raw)
    if ok and type(decoded) == "table" then
      meta = decoded
    end
  end
  if type(meta.attempts) ~= "number" then meta.attempts = 0 end
  if type(meta.leaseToken) ~= "string" then meta.leaseToken = nil end
  if type(meta.lastError) ~= "string" then meta.lastError = nil end
  if type(meta.reason) ~= "string" then meta.reason = nil end
  if meta.lane ~= "critical" and meta.lane ~= "low" then meta.lane = nil end
  if type(meta.firstFailedAt) ~= "number" then meta.firstFailedAt = nil end
  if type(meta.lastFailedAt) ~= "number" then meta.lastFailedAt = nil end
  return meta
end

-- Lanes in KEYS order (critical, normal, low): the index of a lane name, and of an item's lane.
local LANE_INDEX = { critical = 1, normal = 2, low = 3 }
local function laneOf(meta)
  return LANE_INDEX[meta.lane] or 2
end

-- A new item's metadata in lane `laneName` (the normal lane is not written: absent means normal).
local function freshMeta(laneName)
  if laneName == "critical" or laneName == "low" then
    return { attempts = 0, lane = laneName }
  end
  return { attempts = 0 }
end

-- Record a failure at `atMs` (a number): the first one stays, the last one moves.
local function recordFailure(meta, atMs)
  if meta.firstFailedAt == nil then meta.firstFailedAt = atMs end
  meta.lastFailedAt = atMs
end

local function writeMeta(metaKey, id, meta)
  rcall("HSET", metaKey, id, cjson.encode(meta))
end

-- Add item `id` unless the queue knows it (the items hash holds every item of every lane until it
-- is acknowledged or its dead letter deleted): its payload, its metadata `meta`, and its place in
-- `laneKeys[laneOf(meta)]` (a ready or a leased set, by the caller) at `score`. 1 added, 0 known.
local function addItem(itemsKey, metaKey, laneKeys, id, payload, meta, score)
  if rcall("HEXISTS", itemsKey, id) == 1 then
    return 0
  end
  rcall("HSET", itemsKey, id, payload)
  writeMeta(metaKey, id, meta)
  rcall("ZADD", laneKeys[laneOf(meta)], score, id)
  return 1
end

-- The ownership check of ack/retry/deadLetter: the item must be leased (in the leased set of its
-- lane, `leasedKeys[laneOf(meta)]`) under `leaseToken`. Returns its metadata, or nil and the
-- status code (-2 NotFound, -1 NotOwner).
local function leasedMeta(leasedKeys, metaKey, id, leaseToken)
  local meta = readMeta(metaKey, id)
  if not rcall("ZSCORE", leasedKeys[laneOf(meta)], id) then
    return nil, -2
  end
  if meta.leaseToken ~= leaseToken then
    return nil, -1
  end
  return meta
end
