--[[
  Hand out a campaign whose due member was just leased (`leaseDue-1`, the first step of
  `claimDueCampaign` in campaigns.ts), if it is still running.

  Input:
    KEYS[1] campaign:{app}:{id}  HASH

    ARGV: none

  Output:
    the campaign hash as a flat field/value array   running: claimed
    false                                           done or gone: the caller drops the member
]]
local rcall = redis.call

if rcall("HGET", KEYS[1], "state") ~= "running" then
  return false
end
return rcall("HGETALL", KEYS[1])
