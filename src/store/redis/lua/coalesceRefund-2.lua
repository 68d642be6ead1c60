--[[
  Give back the token and emission slot a summary took, after its flush delivered nothing
  (reference §8.3 REFUND). Only a member that holds a slot is refunded, so a repeated refund
  gives nothing back.

  Input:
    KEYS[1] coalesce:throttle:{owner}  HASH tokens, ts (ms)
    KEYS[2] coalesce:emitted:{owner}   ZSET emitted notification -> send time (s)

    ARGV[1] now, ms (the store clock: the Redis server clock in production)
    ARGV[2] token-bucket capacity
    ARGV[3] seconds per refilled token
    ARGV[4] token-bucket TTL, s
    ARGV[5] member: the group id of the summary

  Output:
    1  refunded
    0  the member held no slot; nothing changed
]]
local rcall = redis.call
--- @include "recipientBudget"

if rcall("ZREM", KEYS[2], ARGV[5]) == 0 then
  return 0
end
local capacity = tonumber(ARGV[2])
local tokens = refilledTokens(KEYS[1], tonumber(ARGV[1]), capacity, tonumber(ARGV[3]))
saveTokens(KEYS[1], math.min(capacity, tokens + 1), ARGV[1], ARGV[4])
return 1
