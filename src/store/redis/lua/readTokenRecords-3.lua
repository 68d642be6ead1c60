--[[
  Read the records of some tokens of one shard in one atomic step (tokens.ts): owner, timezone
  offset and device description of each. Readers keep a token for a user only when its owner
  here is that user.

  Input:
    KEYS[1] token_to_pubkey         HASH token -> owner pubkey
    KEYS[2] token_timezone_offsets  HASH token -> minutes
    KEYS[3] token_devices           HASH token -> device JSON

    ARGV[1] and on: the tokens

  Output:
    a flat array {owner or false, offset or false, deviceJson or false, ...}, one triple per
    token, in ARGV order
]]
local rcall = redis.call

local owners = rcall("HMGET", KEYS[1], unpack(ARGV))
local offsets = rcall("HMGET", KEYS[2], unpack(ARGV))
local records = rcall("HMGET", KEYS[3], unpack(ARGV))
local out = {}
for i = 1, #ARGV do
  out[#out + 1] = owners[i]
  out[#out + 1] = offsets[i]
  out[#out + 1] = records[i]
end
return out
