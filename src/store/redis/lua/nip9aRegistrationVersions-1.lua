--[[
  The registration version (event id) now stored at each of some NIP-9a registration addresses
  (port-nip9a-gateway.ts: readNip9aDeliveryStates). Read here so a delivery attempt gets 64
  characters back instead of the whole registration record with its event.

  Input:
    KEYS[1] nip9a:registrations   HASH {pubkey}:{d} -> JSON {pubkey, d, eventId, createdAt, relays, eventJson}

    ARGV[1] the field {pubkey}:{d} of a registration address; each further ARGV another one

  Output:
    one value per field, in order: the stored registration's event id; false when none is stored
    there, or when its record is not the expected JSON (the gateway then treats it as gone)
]]
local rcall = redis.call

local out = {}
for i = 1, #ARGV do
  local raw = rcall("HGET", KEYS[1], ARGV[i])
  local eventId = false
  if raw then
    local ok, record = pcall(cjson.decode, raw)
    if ok and type(record) == "table" and type(record.eventId) == "string" then
      eventId = record.eventId
    end
  end
  out[i] = eventId
end
return out
