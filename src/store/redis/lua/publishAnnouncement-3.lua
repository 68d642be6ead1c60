--[[
  Store a new announcement under the next id (port-inbox.ts publishAnnouncement).

  Input:
    KEYS[1] announcements:seq      STRING the last id given out
    KEYS[2] announcements          HASH id -> JSON {text, createdAtMs, expiresAtMs}
    KEYS[3] announcements:active   ZSET id -> expiry (ms)

    ARGV[1] the JSON document to store
    ARGV[2] its expiry (ms)

  Output:
    the new id
]]
local rcall = redis.call

local id = rcall("INCR", KEYS[1])
rcall("HSET", KEYS[2], id, ARGV[1])
rcall("ZADD", KEYS[3], ARGV[2], id)
return id
