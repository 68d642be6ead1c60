--[[
  Step 1 of a deregistration (tokens.ts): delete a token's record — owner, activity, timezone
  offset and description — if and only if the caller owns it. Step 2 takes the token out of the
  caller's set (forgetUserTokens-2.lua, settleForgottenTokens-2.lua).

  Input:
    KEYS[1] token_to_pubkey         HASH token -> owner pubkey
    KEYS[2] stale_tokens            ZSET token -> activity, unix seconds
    KEYS[3] token_timezone_offsets  HASH token -> minutes
    KEYS[4] token_devices           HASH token -> device JSON

    ARGV[1] token
    ARGV[2] pubkey (the caller)

  Output:
    1  removed
    0  the token is unknown or owned by another pubkey; nothing written
]]
local rcall = redis.call
local token = ARGV[1]

if rcall("HGET", KEYS[1], token) ~= ARGV[2] then
  return 0
end
rcall("HDEL", KEYS[1], token)
rcall("ZREM", KEYS[2], token)
rcall("HDEL", KEYS[3], token)
rcall("HDEL", KEYS[4], token)
return 1
