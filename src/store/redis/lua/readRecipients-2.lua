--[[
  Read what the per-recipient gates of a content event need about many users in one step: each
  user's devices (as listDevices-3.lua reads them) and preferences document.

  The per-user keys cannot be declared in KEYS (their number varies), so the caller passes them,
  fully built and with its client key prefix, as ARGV; nothing here builds a key name. Not Redis
  Cluster safe (single-instance Redis, like divine's notify-list script).

  Input:
    KEYS[1] token_timezone_offsets  HASH token -> minutes
    KEYS[2] token_devices           HASH token -> device JSON

    ARGV[1] and on: two keys per user, in order: user_tokens:{pubkey}, user_preferences:{pubkey}

  Output:
    one entry per user, in order: {devices, preferences} where devices is the flat
    {token, offset or false, deviceJson or false, ...} array and preferences the JSON document
    or false
]]
local rcall = redis.call
--- @include "devices"

local out = {}
for i = 1, #ARGV, 2 do
  out[#out + 1] = { readDevices(ARGV[i], KEYS[1], KEYS[2]), rcall("GET", ARGV[i + 1]) }
end
return out
