--[[
  Take a recipient's token and emission slot for one summary (reference §8.3 TOKEN).

  A member already in the emission window is reported spent without taking anything again: a
  flush recovered after a crash or a lease expiry reuses its reservation.

  Input:
    KEYS[1] coalesce:throttle:{owner}  HASH tokens, ts (ms)
    KEYS[2] coalesce:emitted:{owner}   ZSET emitted notification -> send time (s)

    ARGV[1] now, ms (the store clock: the Redis server clock in production)
    ARGV[2] now, unix seconds
    ARGV[3] token-bucket capacity
    ARGV[4] seconds per refilled token
    ARGV[5] token-bucket TTL, s
    ARGV[6] daily window, s
    ARGV[7] daily cap
    ARGV[8] emission-window TTL, s
    ARGV[9] member: the group id of the summary

  Output:
    {1, 0}     spent (now, or by an earlier call for the same member)
    {2, wait}  the bucket is empty; wait = seconds until the next token (at least 1)
    {3, wait}  the emission window is full; wait = seconds until its oldest emission leaves it
               (at least 1; the whole window when it has no scores)
]]
local rcall = redis.call
--- @include "recipientBudget"

local nowMsText = ARGV[1]
local nowMs = tonumber(nowMsText)
local now = tonumber(ARGV[2])
local capacity = tonumber(ARGV[3])
local refillSecs = tonumber(ARGV[4])
local dailyWindow = tonumber(ARGV[6])
local member = ARGV[9]

local count = trimEmitted(KEYS[2], now, dailyWindow)
if rcall("ZSCORE", KEYS[2], member) then
  return {1, 0}
end
if count >= tonumber(ARGV[7]) then
  local oldest = rcall("ZRANGE", KEYS[2], 0, 0, "WITHSCORES")
  local wait = dailyWindow
  if oldest[2] then wait = math.ceil(tonumber(oldest[2]) + dailyWindow - now) end
  return {3, math.max(1, wait)}
end

local tokens = refilledTokens(KEYS[1], nowMs, capacity, refillSecs)
if tokens >= 1 then
  saveTokens(KEYS[1], tokens - 1, nowMsText, ARGV[5])
  recordEmission(KEYS[2], now, member, ARGV[8])
  return {1, 0}
end
saveTokens(KEYS[1], tokens, nowMsText, ARGV[5])
return {2, math.max(1, math.ceil((1 - tokens) * refillSecs))}
