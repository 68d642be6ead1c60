--[[
  The live NIP-9a callback whose secret hashes to ARGV[1] (port-nip9a-callbacks.ts), in one
  round trip: the receiver looks one up on every relay POST.

  Input:
    KEYS[1] nip9a:callbacks         HASH id -> callback JSON
    KEYS[2] nip9a:callback_secrets  HASH secret hash -> id

    ARGV[1] secret hash

  Output:
    the callback JSON, as stored
    false (nil) when no live callback has that secret hash
]]
local rcall = redis.call

local id = rcall("HGET", KEYS[2], ARGV[1])
if not id then
  return false
end
return rcall("HGET", KEYS[1], id)
