--[[
  Store a user's relay list of one source when it is newer than the stored one, by NIP-01's rule
  for replaceable events: the higher created_at wins, and on equal created_at the lower event id
  (first in lexical order). A stored document that does not decode is replaced, so a damaged
  field cannot wedge the user's list.

  Input:
    KEYS[1] user_relays:{pubkey}  HASH source -> JSON {eventId, createdAt, relays}

    ARGV[1] source (nip65, dm or app)
    ARGV[2] created_at of the list's event, unix seconds
    ARGV[3] id of the list's event (64 hex)
    ARGV[4] the JSON document to store

  Output:
    1  stored (no list of that source before, or this one is newer)
    0  stale: the stored list is as new or newer; nothing changed
]]
local rcall = redis.call
local raw = rcall("HGET", KEYS[1], ARGV[1])
if raw then
  local ok, stored = pcall(cjson.decode, raw)
  if ok and type(stored) == "table" and type(stored.createdAt) == "number" and type(stored.eventId) == "string" then
    local createdAt = tonumber(ARGV[2])
    if createdAt < stored.createdAt then
      return 0
    end
    if createdAt == stored.createdAt and ARGV[3] >= stored.eventId then
      return 0
    end
  end
end
rcall("HSET", KEYS[1], ARGV[1], ARGV[4])
return 1
