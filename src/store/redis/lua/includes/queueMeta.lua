-- Included by the queue scripts (not a script of its own). Reads and writes the metadata JSON
-- of one queue item, `queue:{name}:meta` field {id} = {attempts, leaseToken?, lastError?, reason?}.
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
  return meta
end

local function writeMeta(metaKey, id, meta)
  rcall("HSET", metaKey, id, cjson.encode(meta))
end

-- The ownership check of ack/retry/deadLetter: the item must be leased (in `leasedKey`) under
-- `leaseToken`. Returns its metadata, or nil and the status code (-2 NotFound, -1 NotOwner).
local function leasedMeta(leasedKey, metaKey, id, leaseToken)
  if not rcall("ZSCORE", leasedKey, id) then
    return nil, -2
  end
  local meta = readMeta(metaKey, id)
  if meta.leaseToken ~= leaseToken then
    return nil, -1
  end
  return meta
end
