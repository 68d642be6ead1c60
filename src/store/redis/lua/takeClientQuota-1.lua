--[[
  Take one member into a client's quota window (port-client-quotas.ts, issue 35): a member already
  in the window's set is allowed and changes nothing; a new one is added while the set holds fewer
  than the limit. The key expires with its window.

  Input:
    KEYS[1] client_quota:{scope}:{windowStartMs}:{client}  SET the window's members

    ARGV[1] the member
    ARGV[2] the limit (distinct members per window)
    ARGV[3] ms until the key may go (the window's end, plus a margin for clock skew)

  Output:
    {1, used}  allowed (already a member, or added); used = members after
    {0, used}  refused: the window is full; nothing written
]]
local rcall = redis.call

local used = rcall("SCARD", KEYS[1])
if rcall("SISMEMBER", KEYS[1], ARGV[1]) == 1 then
  return { 1, used }
end
if used >= tonumber(ARGV[2]) then
  return { 0, used }
end
rcall("SADD", KEYS[1], ARGV[1])
rcall("PEXPIRE", KEYS[1], ARGV[3])
return { 1, used + 1 }
