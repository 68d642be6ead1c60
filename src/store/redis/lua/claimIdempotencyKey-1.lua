--[[
  Take an idempotency key (port-sends.ts, port-campaigns.ts) for a new send or campaign, or
  answer who holds it: the first step of `createSend` and `createCampaign` (their headers in
  sends.ts and campaigns.ts say why it comes first and how a crash after it is completed).

  Input:
    KEYS[1] send_idem:{app}:{key} or campaign_idem:{app}:{key}  STRING JSON {"id","hash"}

    ARGV[1] the record JSON {"id","hash"} to store
    ARGV[2] lifetime, whole seconds; 0 for none (campaign keys never expire)

  Output:
    {1}              taken now
    {0, held JSON}   already held: the stored record; nothing written
]]
local rcall = redis.call

local held = rcall("GET", KEYS[1])
if held then
  return { 0, held }
end
if tonumber(ARGV[2]) > 0 then
  rcall("SET", KEYS[1], ARGV[1], "EX", ARGV[2])
else
  rcall("SET", KEYS[1], ARGV[1])
end
return { 1 }
