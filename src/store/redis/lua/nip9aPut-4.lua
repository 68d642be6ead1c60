--[[
  Insert or replace a NIP-9a registration by address under NIP-01 addressable rules (newer
  created_at wins; on a tie the lower id), within the limits, the version being replaced not
  counted (port-nip9a-gateway.ts): registrations per author, registrations per author naming one
  relay, and distinct relays watched in all (only a registration that adds a relay can meet it).

  Input (cluster layout: every key carries the {nip9a} tag, one slot; see keys.ts):
    KEYS[1] nip9a:registrations     HASH {pubkey}:{d} -> record JSON
    KEYS[2] nip9a:author:{pubkey}   SET of d
    KEYS[3] nip9a:relay_counts      HASH relay -> count
    KEYS[4] nip9a:version           STRING change counter

    ARGV[1] field ({pubkey}:{d})
    ARGV[2] d
    ARGV[3] event id
    ARGV[4] created_at (unix seconds)
    ARGV[5] relays, JSON array
    ARGV[6] the record JSON to store
    ARGV[7] per-author limit
    ARGV[8] per-author-per-relay limit
    ARGV[9] watched-relays limit (distinct relays with a registration)
    ARGV[10] the author's pubkey (the prefix of the fields of their other registrations)

  Output:
    {"stored"} | {"replaced", previousEventId} | {"stale", currentEventId}
    | {"author_limit"} | {"author_relay_limit", relay} | {"watched_relays_limit", relay}
]]
local rcall = redis.call

local createdAt = tonumber(ARGV[4])
local newRelays = cjson.decode(ARGV[5])
local oldRelays = {}
local previous = rcall("HGET", KEYS[1], ARGV[1])
local previousId = nil
if previous then
  local old = cjson.decode(previous)
  if not (createdAt > old.createdAt or (createdAt == old.createdAt and ARGV[3] < old.eventId)) then
    return { "stale", old.eventId }
  end
  previousId = old.eventId
  for _, relay in ipairs(old.relays) do
    oldRelays[relay] = true
  end
end

local others = rcall("SCARD", KEYS[2])
if rcall("SISMEMBER", KEYS[2], ARGV[2]) == 1 then
  others = others - 1
end
if others >= tonumber(ARGV[7]) then
  return { "author_limit" }
end
-- The author's other registrations naming each new relay (at most the per-author limit of records).
local mine = {}
for _, d in ipairs(rcall("SMEMBERS", KEYS[2])) do
  if d ~= ARGV[2] then
    local record = rcall("HGET", KEYS[1], ARGV[10] .. ":" .. d)
    if record then
      for _, relay in ipairs(cjson.decode(record).relays) do
        mine[relay] = (mine[relay] or 0) + 1
      end
    end
  end
end
for _, relay in ipairs(newRelays) do
  if (mine[relay] or 0) >= tonumber(ARGV[8]) then
    return { "author_relay_limit", relay }
  end
end

-- Distinct relays after the write: those others still hold, plus the ones this write adds.
local held = rcall("HLEN", KEYS[3])
for relay in pairs(oldRelays) do
  if tonumber(rcall("HGET", KEYS[3], relay) or "0") <= 1 then
    held = held - 1
  end
end
local added = 0
local firstAdded = nil
for _, relay in ipairs(newRelays) do
  local others = tonumber(rcall("HGET", KEYS[3], relay) or "0")
  if oldRelays[relay] then
    others = others - 1
  end
  if others <= 0 then
    added = added + 1
    firstAdded = firstAdded or relay
  end
end
if added > 0 and held + added > tonumber(ARGV[9]) then
  return { "watched_relays_limit", firstAdded }
end

for relay in pairs(oldRelays) do
  if rcall("HINCRBY", KEYS[3], relay, -1) <= 0 then
    rcall("HDEL", KEYS[3], relay)
  end
end
for _, relay in ipairs(newRelays) do
  rcall("HINCRBY", KEYS[3], relay, 1)
end
rcall("HSET", KEYS[1], ARGV[1], ARGV[6])
rcall("SADD", KEYS[2], ARGV[2])
rcall("INCR", KEYS[4])
if previousId then
  return { "replaced", previousId }
end
return { "stored" }
