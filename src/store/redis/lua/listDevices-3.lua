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
--- @include "devices"

return readDevices(KEYS[1], KEYS[2], KEYS[3])
