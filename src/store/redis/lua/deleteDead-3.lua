--[[
  Forget a dead item: its dead-letter entry, payload and metadata.

  Input:
    KEYS[1] queue:{name}:dead   ZSET id -> dead-at ms
    KEYS[2] queue:{name}:items  HASH id -> payload JSON
    KEYS[3] queue:{name}:meta   HASH id -> metadata JSON

    ARGV[1] item id

  Output:
    1   deleted
    -2  NotFound: no dead item with this id
]]
local rcall = redis.call
local id = ARGV[1]
if rcall("ZREM", KEYS[1], id) == 0 then
  return -2
end
rcall("HDEL", KEYS[2], id)
rcall("HDEL", KEYS[3], id)
return 1
