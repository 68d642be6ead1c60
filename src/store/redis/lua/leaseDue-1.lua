--[[
  Lease one member of a due schedule (sends, campaigns): if it is due by now, make it due again
  at the lease deadline, so one worker at a time gets it. The first step of `claimDueSend` and
  `claimDueCampaign`; the record's own step (`claimSend-1`, `claimCampaign-1`) follows. A worker
  that dies between the two loses nothing: the member is due again when the lease runs out.

  Input:
    KEYS[1] sends:due:{lane} (a shard of it) or campaigns:due   ZSET "{app}:{id}" -> due time, ms

    ARGV[1] the member "{app}:{id}"
    ARGV[2] now, ms
    ARGV[3] lease deadline, ms

  Output:
    1  leased now
    0  not due (any more): another worker took it, or it was finished or removed meanwhile
]]
local rcall = redis.call

local due = rcall("ZSCORE", KEYS[1], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[2]) then
  return 0
end
rcall("ZADD", KEYS[1], ARGV[3], ARGV[1])
return 1
