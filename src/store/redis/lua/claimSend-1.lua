--[[
  Start a send whose due member was just leased (`leaseDue-1`, the first step of `claimDueSend`
  in sends.ts): a scheduled or started send becomes `started`. The record decides: a cancel and
  a claim cannot both win, whatever the due schedule said.

  Input:
    KEYS[1] send:{app}:{id}  HASH request, lane, state, sendAtMs, createdAtMs, offset

    ARGV: none

  Output:
    {request, sendAtMs, createdAtMs, offset}  claimed (state is now `started`)
    false                                     the record is gone (expired), cancelled or done:
                                              the caller drops the member from the schedule
]]
local rcall = redis.call

local fields = rcall("HMGET", KEYS[1], "request", "state", "sendAtMs", "createdAtMs", "offset")
if not fields[1] or (fields[2] ~= "scheduled" and fields[2] ~= "started") then
  return false
end
rcall("HSET", KEYS[1], "state", "started")
return { fields[1], fields[3], fields[4], fields[5] }
