--[[
  Create a campaign (port-campaigns.ts) unless its idempotency key names one already, in one step.

  Input:
    KEYS[1] campaign:{app}:{id}                  HASH (must not exist)
    KEYS[2] campaign_idem:{app}:{idempotencyKey} STRING JSON {"id","hash"}
    KEYS[3] campaigns:due                        ZSET "{app}:{id}" -> due time, ms

    ARGV[1] request JSON
    ARGV[2] request hash (hex)
    ARGV[3] now, ms
    ARGV[4] the due member "{app}:{id}"
    ARGV[5] the idempotency record JSON {"id","hash"}

  Output:
    {1}                 created, running and due now
    {0, idempotencyJson} the key is held: nothing written
]]
local rcall = redis.call

local held = rcall("GET", KEYS[2])
if held then
  return { 0, held }
end
if rcall("EXISTS", KEYS[1]) == 1 then
  return redis.error_reply("campaign id exists")
end
rcall("HSET", KEYS[1], "request", ARGV[1], "hash", ARGV[2], "state", "running", "createdAtMs", ARGV[3], "cursor", "",
  "consenting", 0, "deferred", 0, "sent", 0, "failed", 0, "opened", 0)
rcall("SET", KEYS[2], ARGV[5])
rcall("ZADD", KEYS[3], ARGV[3], ARGV[4])
return { 1 }
