--[[
  Replace a subscriber's notify list (kind 30000, d=notify): divine-push-service's
  replace_notify_subscriptions, with the same stored formats.

  The forward index (KEYS[1]) and the reverse indexes (notify_watchers:{creator}) are two views of
  one relation and move together in this one script. Redis does not roll a script back, so a
  script that dies midway (WRONGTYPE, a maxmemory rejection) keeps what it wrote: removals
  therefore clear the reverse entry before the forward one and additions write the forward entry
  first, which keeps the forward index a superset of the true relation at every step. The next
  list reconciles a superset; nothing could repair a forward index missing entries the reverse
  index still holds. Do not turn the diff into DEL and rebuild.

  The reverse-index keys depend on the creators stored in KEYS[1], so they cannot all be declared
  in KEYS; the caller passes their full prefix (its client key prefix followed by
  "notify_watchers:") as ARGV[2], so a key prefix still reaches every key written. Not Redis
  Cluster safe, like divine's script (single-instance Redis only).

  Input:
    KEYS[1] notify_subs:{subscriber}     SET    creators the subscriber bells (forward index)
    KEYS[2] notify_subs_ts:{subscriber}  STRING "created_at:event_id" of the applied list; a bare
                                                integer (an earlier divine build) is a timestamp
                                                with no known id; anything else counts as absent

    ARGV[1] created_at of the incoming list, decimal unix seconds
    ARGV[2] the full key prefix of the reverse indexes ("<client prefix>notify_watchers:")
    ARGV[3] subscriber pubkey, hex
    ARGV[4] event id of the incoming list, lowercase hex
    ARGV[5..] creators, hex: deduplicated, without the subscriber, capped by the caller

  Output:
    1  applied (including an exact replay of the applied list, which re-asserts every entry)
    0  stale: older than the applied list, or the same created_at and a higher id, or the same
       created_at as a stored version that has no id; nothing written
]]
local rcall = redis.call

local incomingAt = tonumber(ARGV[1])
local prefix = ARGV[2]
local subscriber = ARGV[3]
local incomingId = ARGV[4]

local stored = rcall("GET", KEYS[2])
if stored then
  local storedAtText, storedId = string.match(stored, "^(%d+):(%x+)$")
  if storedAtText == nil and string.match(stored, "^%d+$") then
    storedAtText = stored
  end
  if storedAtText ~= nil then
    local storedAt = tonumber(storedAtText)
    if storedAt > incomingAt then
      return 0
    end
    -- NIP-01 keeps the lowest id: an equal timestamp applies only when its id sorts at or below
    -- the stored one (equal is an exact replay, applied as a repair).
    if storedAt == incomingAt and (storedId == nil or incomingId > storedId) then
      return 0
    end
  end
end

local incoming = {}
for i = 5, #ARGV do
  incoming[ARGV[i]] = true
end

local previous = rcall("SMEMBERS", KEYS[1])
for _, creator in ipairs(previous) do
  if not incoming[creator] then
    rcall("SREM", prefix .. creator, subscriber)
    rcall("SREM", KEYS[1], creator)
  end
end

for i = 5, #ARGV do
  rcall("SADD", KEYS[1], ARGV[i])
  rcall("SADD", prefix .. ARGV[i], subscriber)
end

rcall("SET", KEYS[2], ARGV[1] .. ":" .. incomingId)
return 1
