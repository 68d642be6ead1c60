--[[
  Register (or re-register) a device token for a pubkey, moving ownership when another pubkey
  held the token. A compare-and-set on the owner: the caller names the previous owner it expects
  (and passes that owner's user_tokens key as KEYS[6]), so every key the script touches is
  declared. When the stored owner is neither the caller, nor absent, nor the expected one,
  nothing is written and the current owner is returned so the caller can retry with it.

  Input:
    KEYS[1] token_to_pubkey         HASH token -> pubkey
    KEYS[2] user_tokens:{pubkey}    SET of the new owner's tokens
    KEYS[3] stale_tokens            ZSET token -> activity, unix seconds
    KEYS[4] token_timezone_offsets  HASH token -> minutes
    KEYS[5] token_devices           HASH token -> device JSON (non-FCM transports)
    KEYS[6] user_tokens:{expected}  SET of the expected previous owner (KEYS[2] when none)

    ARGV[1] token
    ARGV[2] pubkey (new owner)
    ARGV[3] now, unix seconds
    ARGV[4] expected previous owner pubkey, '' when the caller expects none
    ARGV[5] timezone offset in minutes, '' to clear
    ARGV[6] device JSON, '' for a plain FCM token (clears the field)

  Output:
    {1, previousOwner or false}  registered; previousOwner is set only when ownership moved
    {0, currentOwner}            the owner changed since the caller read it; nothing written
]]
local rcall = redis.call
local token = ARGV[1]
local pubkey = ARGV[2]

local current = rcall("HGET", KEYS[1], token)
local previous = false
if current and current ~= pubkey then
  if current ~= ARGV[4] then
    return {0, current}
  end
  rcall("SREM", KEYS[6], token)
  previous = current
end

rcall("SADD", KEYS[2], token)
rcall("ZADD", KEYS[3], ARGV[3], token)
rcall("HSET", KEYS[1], token, pubkey)
if ARGV[5] == "" then
  rcall("HDEL", KEYS[4], token)
else
  rcall("HSET", KEYS[4], token, ARGV[5])
end
if ARGV[6] == "" then
  rcall("HDEL", KEYS[5], token)
else
  rcall("HSET", KEYS[5], token, ARGV[6])
end
return {1, previous}
