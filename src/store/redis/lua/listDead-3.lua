--[[
  Read the oldest dead items with their payloads and metadata, in one atomic step.

  Input:
    KEYS[1] queue:{name}:dead   ZSET id -> dead-at ms
    KEYS[2] queue:{name}:items  HASH id -> payload JSON
    KEYS[3] queue:{name}:meta   HASH id -> metadata JSON

    ARGV[1] limit (>= 1)

  Output:
    a flat array {id, deadAtMs, payloadJson or false, metaJson or false, id, ...}, oldest first
]]
local rcall = redis.call
local dead = rcall("ZRANGE", KEYS[1], 0, tonumber(ARGV[1]) - 1, "WITHSCORES")
local out = {}
for i = 1, #dead, 2 do
  local id = dead[i]
  out[#out + 1] = id
  out[#out + 1] = dead[i + 1]
  out[#out + 1] = rcall("HGET", KEYS[2], id)
  out[#out + 1] = rcall("HGET", KEYS[3], id)
end
return out
