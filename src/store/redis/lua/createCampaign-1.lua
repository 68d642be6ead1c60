--[[
  Store a new campaign (port-campaigns.ts), running at the start. The second step of
  `createCampaign` (campaigns.ts): after its idempotency key is taken, before it is made due.

  Input:
    KEYS[1] campaign:{app}:{id}  HASH (must not exist)

    ARGV[1] request JSON
    ARGV[2] request hash (hex)
    ARGV[3] now, ms

  Output:
    1  created
    0  the id exists already; nothing written
]]
local rcall = redis.call

if rcall("EXISTS", KEYS[1]) == 1 then
  return 0
end
rcall("HSET", KEYS[1], "request", ARGV[1], "hash", ARGV[2], "state", "running", "createdAtMs", ARGV[3], "cursor", "",
  "consenting", 0, "deferred", 0, "sent", 0, "failed", 0, "opened", 0)
return 1
