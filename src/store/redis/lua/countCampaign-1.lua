--[[
  Add to one counter of a campaign, only while the campaign exists (a late delivery outcome of a
  removed campaign must not re-create a bare hash).

  Input:
    KEYS[1] campaign:{app}:{id}  HASH

    ARGV[1] counter field (sent, failed, opened)
    ARGV[2] amount

  Output:
    1  counted
    0  no such campaign
]]
local rcall = redis.call

if rcall("EXISTS", KEYS[1]) == 0 then
  return 0
end
rcall("HINCRBY", KEYS[1], ARGV[1], ARGV[2])
return 1
