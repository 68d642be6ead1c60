--[[
  Store a new NIP-9a callback URL (port-nip9a-callbacks.ts), unless its id or secret hash is
  already taken (both are fresh random values of the caller's, so a clash is a caller bug).

  Input:
    KEYS[1] nip9a:callbacks             HASH id -> callback JSON (stored as given)
    KEYS[2] nip9a:callback_secrets      HASH secret hash -> id
    KEYS[3] nip9a:callbacks_of:{owner}  ZSET id -> created-at ms

    ARGV[1] id
    ARGV[2] secret hash (lowercase hex SHA-256 of the URL's secret)
    ARGV[3] created-at, ms
    ARGV[4] callback JSON {id, secretHash, secretHint, owner, relay, createdAtMs}

  Output:
    1  stored
    0  the id or the secret hash is already stored; nothing written
]]
local rcall = redis.call

if rcall("HEXISTS", KEYS[1], ARGV[1]) == 1 or rcall("HEXISTS", KEYS[2], ARGV[2]) == 1 then
  return 0
end
rcall("HSET", KEYS[1], ARGV[1], ARGV[4])
rcall("HSET", KEYS[2], ARGV[2], ARGV[1])
rcall("ZADD", KEYS[3], ARGV[3], ARGV[1])
return 1
