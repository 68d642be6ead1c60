--[[
  Revoke a live API key (port-apikeys.ts): set its revocation time, once.

  Input (cluster layout: `apikey:{apikeys}:{id}`, `apikey_hashes:{apikeys}`, `apikeys:{apikeys}`,
  one slot; see keys.ts):
    KEYS[1] apikey:{id}    HASH appId, role, hash, prefix, createdAtMs, revokedAtMs

    ARGV[1] now, ms

  Output:
    1  revoked now
    0  unknown id, or already revoked; nothing written
]]
local rcall = redis.call

if rcall("EXISTS", KEYS[1]) == 0 or rcall("HEXISTS", KEYS[1], "revokedAtMs") == 1 then
  return 0
end
rcall("HSET", KEYS[1], "revokedAtMs", ARGV[1])
return 1
