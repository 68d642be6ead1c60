--[[
  Step 1 of the stale-token sweep in one token shard (tokens.ts): delete the records of up to
  ARGV[2] tokens whose activity is older than the cutoff, and return them with their owners so
  step 2 takes them out of the owners' sets. Staleness and owner are read in the same step as
  the deletion, so a token refreshed or re-registered before it is kept.

  Input:
    KEYS[1] token_to_pubkey         HASH token -> owner pubkey
    KEYS[2] stale_tokens            ZSET token -> activity, unix seconds
    KEYS[3] token_timezone_offsets  HASH token -> minutes
    KEYS[4] token_devices           HASH token -> device JSON

    ARGV[1] cutoff, unix seconds (may be fractional): stale means score < cutoff
    ARGV[2] most tokens to remove in this call

  Output:
    a flat array {token, owner or '' (no owner mapping), token, owner, ...} of the removed tokens
]]
local rcall = redis.call

local tokens = rcall("ZRANGEBYSCORE", KEYS[2], "-inf", "(" .. ARGV[1], "LIMIT", 0, tonumber(ARGV[2]))
local out = {}
for _, token in ipairs(tokens) do
  local owner = rcall("HGET", KEYS[1], token)
  rcall("HDEL", KEYS[1], token)
  rcall("ZREM", KEYS[2], token)
  rcall("HDEL", KEYS[3], token)
  rcall("HDEL", KEYS[4], token)
  out[#out + 1] = token
  out[#out + 1] = owner or ""
end
return out
