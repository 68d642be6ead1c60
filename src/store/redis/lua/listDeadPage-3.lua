--[[
  Read one page of a queue's dead letters in (dead-at, id) order, after a cursor position, with
  their payloads and metadata, in one atomic step. Ties in dead-at are ordered by id, bytewise
  (as Redis orders equal scores, and as the SQLite adapter's BINARY collation does).

  Input:
    KEYS[1] queue:{name}:dead   ZSET id -> dead-at ms (every lane)
    KEYS[2] queue:{name}:items  HASH id -> payload JSON
    KEYS[3] queue:{name}:meta   HASH id -> metadata JSON

    ARGV[1] the cursor's dead-at, ms, or "-inf" for the first page
    ARGV[2] the cursor's id ("" for the first page)
    ARGV[3] most entries to return (>= 1)

  Output:
    a flat array {id, deadAtMs, payloadJson or false, metaJson or false, id, ...}, in order
]]
local rcall = redis.call

-- Bounds the walk through the cursor's tie group per step.
local TIE_STEP = 100

local want = tonumber(ARGV[3])
local out = {}
local count = 0

local function emit(id, score)
  out[#out + 1] = id
  out[#out + 1] = score
  out[#out + 1] = rcall("HGET", KEYS[2], id)
  out[#out + 1] = rcall("HGET", KEYS[3], id)
  count = count + 1
end

-- a > b, comparing bytes (Lua's own < follows the C locale's collation).
local function bytewiseAfter(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = a:byte(i), b:byte(i)
    if x ~= y then
      return x > y
    end
  end
  return #a > #b
end

local lower = "-inf"
if ARGV[1] ~= "-inf" then
  -- The rest of the cursor's tie group first: same dead-at, an id after the cursor's.
  local offset = 0
  while count < want do
    local tied = rcall("ZRANGEBYSCORE", KEYS[1], ARGV[1], ARGV[1], "LIMIT", offset, TIE_STEP)
    if #tied == 0 then
      break
    end
    for _, id in ipairs(tied) do
      if count < want and bytewiseAfter(id, ARGV[2]) then
        emit(id, ARGV[1])
      end
    end
    offset = offset + #tied
  end
  lower = "(" .. ARGV[1]
end

if count < want then
  local rest = rcall("ZRANGEBYSCORE", KEYS[1], lower, "+inf", "WITHSCORES", "LIMIT", 0, want - count)
  for i = 1, #rest, 2 do
    emit(rest[i], rest[i + 1])
  end
end
return out
