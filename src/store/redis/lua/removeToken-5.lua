--[[
  Remove a device token if and only if the caller owns it (a deregistration by anyone else is
  refused), together with its activity score, timezone offset and device record.

  Input:
    KEYS[1] token_to_pubkey         HASH token -> pubkey
    KEYS[2] user_tokens:{pubkey}    SET of the caller's tokens
    KEYS[3] stale_tokens            ZSET token -> activity, unix seconds
    KEYS[4] token_timezone_offsets  HASH token -> minutes
    KEYS[5] token_devices           HASH token -> device JSON

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
rcall("SREM", KEYS[2], token)
rcall("ZREM", KEYS[3], token)
rcall("HDEL", KEYS[1], token)
rcall("HDEL", KEYS[4], token)
rcall("HDEL", KEYS[5], token)
return 1
