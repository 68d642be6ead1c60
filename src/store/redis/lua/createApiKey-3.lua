--[[
  Store a new API key (port-apikeys.ts) unless its id or its hash is already stored.

  Input (cluster layout: `apikey:{apikeys}:{id}`, `apikey_hashes:{apikeys}`, `apikeys:{apikeys}`,
  one slot; see keys.ts):
    KEYS[1] apikey:{id}    HASH appId, role, hash, prefix, createdAtMs, revokedAtMs (only once revoked)
    KEYS[2] apikey_hashes  HASH key hash (SHA-256 hex) -> key id
    KEYS[3] apikeys        ZSET key id -> createdAtMs

    ARGV[1] key id
    ARGV[2] app id
    ARGV[3] role (send | admin)
    ARGV[4] key hash
    ARGV[5] key prefix
    ARGV[6] now, ms

  Output:
    1  stored
    0  the id or the hash is already stored; nothing written
]]
local rcall = redis.call

if rcall("EXISTS", KEYS[1]) == 1 or rcall("HEXISTS", KEYS[2], ARGV[4]) == 1 then
  return 0
end
rcall("HSET", KEYS[1], "appId", ARGV[2], "role", ARGV[3], "hash", ARGV[4], "prefix", ARGV[5], "createdAtMs", ARGV[6])
rcall("HSET", KEYS[2], ARGV[4], ARGV[1])
rcall("ZADD", KEYS[3], ARGV[6], ARGV[1])
return 1
