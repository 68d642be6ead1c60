--[[
  Record the use of an API key (port-apikeys.ts): its lastUsedAtMs becomes the later of the
  stored one and the given time, so replicas' writes arriving out of order never move it back.

  Input (cluster layout: `apikey:{apikeys}:{id}`; see keys.ts):
    KEYS[1] apikey:{id}    HASH appId, role, hash, prefix, createdAtMs, revokedAtMs, lastUsedAtMs

    ARGV[1] the time of the use, ms

  Output:
    1  the key exists (its last use is now the later of the two)
    0  unknown id; nothing written
]]
local rcall = redis.call

if rcall("EXISTS", KEYS[1]) == 0 then
  return 0
end
local stored = tonumber(rcall("HGET", KEYS[1], "lastUsedAtMs"))
if stored == nil or stored < tonumber(ARGV[1]) then
  rcall("HSET", KEYS[1], "lastUsedAtMs", ARGV[1])
end
return 1
