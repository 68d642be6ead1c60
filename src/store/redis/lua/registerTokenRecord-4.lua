--[[
  Step 1 of a registration (tokens.ts): write a token's record in its shard — owner, activity,
  timezone offset and device description — and say whose it was. The record is the truth about
  a token; the owner's token set (step 2) and the previous owner's (step 3) are indexes that
  readers check against it. Idempotent: a retry writes the same record and finds the caller as
  owner.

  Input:
    KEYS[1] token_to_pubkey         HASH token -> owner pubkey
    KEYS[2] stale_tokens            ZSET token -> activity, unix seconds
    KEYS[3] token_timezone_offsets  HASH token -> minutes
    KEYS[4] token_devices           HASH token -> device JSON (non-plain-FCM devices)

    ARGV[1] token
    ARGV[2] pubkey (the new owner)
    ARGV[3] now, unix seconds
    ARGV[4] timezone offset in minutes, '' to clear
    ARGV[5] device JSON, '' for a plain FCM token (clears the field)

  Output:
    the previous owner when the token belonged to another pubkey, false (nil) otherwise
]]
local rcall = redis.call
local token = ARGV[1]

local previous = rcall("HGET", KEYS[1], token)
rcall("HSET", KEYS[1], token, ARGV[2])
rcall("ZADD", KEYS[2], ARGV[3], token)
if ARGV[4] == "" then
  rcall("HDEL", KEYS[3], token)
else
  rcall("HSET", KEYS[3], token, ARGV[4])
end
if ARGV[5] == "" then
  rcall("HDEL", KEYS[4], token)
else
  rcall("HSET", KEYS[4], token, ARGV[5])
end
if previous and previous ~= ARGV[2] then
  return previous
end
return false
