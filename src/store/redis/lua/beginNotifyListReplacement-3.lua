--[[
  Step 1 of replacing a subscriber's notify list (kind 30000, d=notify), in the subscriber's slot:
  divine-push-service's replace_notify_subscriptions split into one step per slot (bells.ts has
  the whole protocol). Checks the stored version, takes the subscriber's replacement lease and
  ADDS the incoming creators to the forward index; it removes nothing. The caller then adds the
  subscriber to each incoming creator's watchers, removes it from each dropped creator's, and ends
  with finishNotifyListReplacement-3.lua, which takes the dropped creators out of the forward
  index and records the version. So the forward index (the only record of which
  notify_watchers:* keys name the subscriber) is a superset of the reverse index at every step:
  a crash anywhere leaves entries the next list (or this list again) reconciles, never reverse
  entries nothing can find. Do not turn the diff into DEL and rebuild.

  A retry of the same list is idempotent: it passes the version check as an exact replay, may take
  the lease it holds itself (the lease value is the version), and finds the same dropped creators
  (they stay in the forward index until step 4). A step that fails gives the lease back
  (releaseClaim-1.lua, compare-and-delete on the version), so a retry need not wait for it.

  Input:
    KEYS[1] notify_subs:{subscriber}        SET    creators the subscriber bells (forward index)
    KEYS[2] notify_subs_ts:{subscriber}     STRING "created_at:event_id" of the applied list; a bare
                                                   integer (an earlier divine build) is a timestamp
                                                   with no known id; anything else counts as absent
    KEYS[3] notify_subs_lease:{subscriber}  STRING "created_at:event_id" of the list being applied

    ARGV[1] created_at of the incoming list, decimal unix seconds
    ARGV[2] event id of the incoming list, lowercase hex
    ARGV[3] lease, ms (how long another list of this subscriber waits for this one at most)
    ARGV[4..] creators, hex: deduplicated, without the subscriber, capped by the caller

  Output:
    { 1, dropped creator, ... }  go on: the lease is taken, the incoming creators are in the
                                 forward index; the dropped ones (stored, not incoming) follow
    { 0 }                        stale: older than the applied list, or the same created_at and a
                                 higher id, or the same created_at as a stored version that has no
                                 id; nothing written
    { -1, ms }                   busy: another list of this subscriber is being applied (its lease
                                 ends in ms); nothing written
]]
local rcall = redis.call

local incomingAt = tonumber(ARGV[1])
local incomingId = ARGV[2]
local version = ARGV[1] .. ":" .. incomingId

local stored = rcall("GET", KEYS[2])
if stored then
  local storedAtText, storedId = string.match(stored, "^(%d+):(%x+)$")
  if storedAtText == nil and string.match(stored, "^%d+$") then
    storedAtText = stored
  end
  if storedAtText ~= nil then
    local storedAt = tonumber(storedAtText)
    if storedAt > incomingAt then
      return { 0 }
    end
    -- NIP-01 keeps the lowest id: an equal timestamp applies only when its id sorts at or below
    -- the stored one (equal is an exact replay, applied as a repair).
    if storedAt == incomingAt and (storedId == nil or incomingId > storedId) then
      return { 0 }
    end
  end
end

local holder = rcall("GET", KEYS[3])
if holder and holder ~= version then
  return { -1, rcall("PTTL", KEYS[3]) }
end
rcall("SET", KEYS[3], version, "PX", ARGV[3])

local incoming = {}
for i = 4, #ARGV do
  incoming[ARGV[i]] = true
  rcall("SADD", KEYS[1], ARGV[i])
end

local out = { 1 }
for _, creator in ipairs(rcall("SMEMBERS", KEYS[1])) do
  if not incoming[creator] then
    out[#out + 1] = creator
  end
end
return out
