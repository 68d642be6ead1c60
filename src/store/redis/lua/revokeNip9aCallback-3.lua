--[[
  Delete a NIP-9a callback URL if and only if ARGV[1] owns it (port-nip9a-callbacks.ts): its
  record, its secret-hash index entry and its place in the owner's list, together.

  Input:
    KEYS[1] nip9a:callbacks             HASH id -> callback JSON {.., secretHash, owner, ..}
    KEYS[2] nip9a:callback_secrets      HASH secret hash -> id
    KEYS[3] nip9a:callbacks_of:{owner}  ZSET id -> created-at ms (the owner of ARGV[1])

    ARGV[1] owner pubkey (64 hex)
    ARGV[2] callback id

  Output:
    1  deleted
    0  unknown id, or a record that is not ARGV[1]'s (or unreadable); nothing written
]]
local rcall = redis.call

local raw = rcall("HGET", KEYS[1], ARGV[2])
if not raw then
  return 0
end
local ok, record = pcall(cjson.decode, raw)
if not ok or type(record) ~= "table" or record.owner ~= ARGV[1] then
  return 0
end
if type(record.secretHash) == "string" then
  rcall("HDEL", KEYS[2], record.secretHash)
end
rcall("HDEL", KEYS[1], ARGV[2])
rcall("ZREM", KEYS[3], ARGV[2])
return 1
