--[[
  Delete a NIP-9a registration, optionally only if it is still a given version
  (compare-and-delete; port-nip9a-gateway.ts).

  Input (cluster layout: every key carries the {nip9a} tag, one slot; see keys.ts):
    KEYS[1] nip9a:registrations     HASH {pubkey}:{d} -> record JSON
    KEYS[2] nip9a:author:{pubkey}   SET of d
    KEYS[3] nip9a:relay_counts      HASH relay -> count
    KEYS[4] nip9a:version           STRING change counter

    ARGV[1] field ({pubkey}:{d})
    ARGV[2] d
    ARGV[3] the event id it must still have, or "" for any

  Output:
    1 when deleted, 0 otherwise
]]
local rcall = redis.call

local current = rcall("HGET", KEYS[1], ARGV[1])
if not current then
  return 0
end
local old = cjson.decode(current)
if ARGV[3] ~= "" and old.eventId ~= ARGV[3] then
  return 0
end
for _, relay in ipairs(old.relays) do
  if rcall("HINCRBY", KEYS[3], relay, -1) <= 0 then
    rcall("HDEL", KEYS[3], relay)
  end
end
rcall("HDEL", KEYS[1], ARGV[1])
rcall("SREM", KEYS[2], ARGV[2])
rcall("INCR", KEYS[4])
return 1
