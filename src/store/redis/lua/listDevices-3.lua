--[[
  Read every device of one pubkey in one atomic step: its tokens with their timezone offsets
  and device records.

  Input:
    KEYS[1] user_tokens:{pubkey}    SET of tokens
    KEYS[2] token_timezone_offsets  HASH token -> minutes
    KEYS[3] token_devices           HASH token -> device JSON

    ARGV: none

  Output:
    a flat array {token, offset or false, deviceJson or false, token, ...}; empty when the
    pubkey has no tokens
]]
local rcall = redis.call
local tokens = rcall("SMEMBERS", KEYS[1])
local out = {}
if #tokens == 0 then
  return out
end
local offsets = rcall("HMGET", KEYS[2], unpack(tokens))
local devices = rcall("HMGET", KEYS[3], unpack(tokens))
for i, token in ipairs(tokens) do
  out[#out + 1] = token
  out[#out + 1] = offsets[i]
  out[#out + 1] = devices[i]
end
return out
