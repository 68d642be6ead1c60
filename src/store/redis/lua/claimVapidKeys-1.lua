--[[
  The fleet's VAPID key pair, set if absent (port-vapid.ts): the stored pair when there is one,
  otherwise the candidate, stored now. One script, so processes starting at once get one pair.

  Input:
    KEYS[1] webpush:vapid    STRING JSON {"publicKey","privateKey"} (base64url)

    ARGV[1] the candidate pair, JSON in the same shape

  Output:
    the stored JSON (the candidate when it was stored now)
]]
local rcall = redis.call

local current = rcall("GET", KEYS[1])
if current then
  return current
end
rcall("SET", KEYS[1], ARGV[1])
return ARGV[1]
