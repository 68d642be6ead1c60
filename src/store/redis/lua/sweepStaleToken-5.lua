--[[
  Remove one stale token found by the sweep (ZRANGEBYSCORE stale_tokens, HMGET token_to_pubkey),
  re-checking inside the transaction that it is still stale and still owned by the owner the
  sweep read. A token refreshed or re-registered between the read and this script is kept.
  The sweep queues one call per token inside a single MULTI.

  Input:
    KEYS[1] stale_tokens            ZSET token -> activity, unix seconds
    KEYS[2] token_to_pubkey         HASH token -> pubkey
    KEYS[3] token_timezone_offsets  HASH token -> minutes
    KEYS[4] token_devices           HASH token -> device JSON
    KEYS[5] user_tokens:{owner}     SET of the owner the sweep read (unused when ARGV[2] is '')

    ARGV[1] token
    ARGV[2] owner pubkey read by the sweep, '' when the token had no owner mapping
    ARGV[3] cutoff, unix seconds (may be fractional): stale means score < cutoff

  Output:
    1  removed
    0  kept: no longer stale, no longer registered, or its owner changed
]]
local rcall = redis.call
local token = ARGV[1]

local score = rcall("ZSCORE", KEYS[1], token)
if not score or tonumber(score) >= tonumber(ARGV[3]) then
  return 0
end
local owner = rcall("HGET", KEYS[2], token)
if (owner or "") ~= ARGV[2] then
  return 0
end
rcall("ZREM", KEYS[1], token)
rcall("HDEL", KEYS[2], token)
rcall("HDEL", KEYS[3], token)
rcall("HDEL", KEYS[4], token)
if owner then
  rcall("SREM", KEYS[5], token)
end
return 1
