-- Included by the scripts that read a user's devices (not a script of its own): listDevices,
-- readRecipients, readBellWatchers. The reply shape is what `devicesFromListReply` (tokens.ts)
-- parses.
--   user_tokens:{pubkey}    SET  of tokens
--   token_timezone_offsets  HASH token -> minutes
--   token_devices           HASH token -> device JSON
-- Expects `rcall` to be defined by the including script.

-- The flat {token, offset or false, deviceJson or false, token, ...} of one user's tokens set;
-- empty when the user has no tokens.
local function readDevices(tokensKey, offsetsKey, devicesKey)
  local tokens = rcall("SMEMBERS", tokensKey)
  local out = {}
  if #tokens == 0 then
    return out
  end
  local offsets = rcall("HMGET", offsetsKey, unpack(tokens))
  local records = rcall("HMGET", devicesKey, unpack(tokens))
  for i, token in ipairs(tokens) do
    out[#out + 1] = token
    out[#out + 1] = offsets[i]
    out[#out + 1] = records[i]
  end
  return out
end
