--[[
  Ingest one like/repost for one recipient (reference §8.2), atomically: replay a stored
  disposition, else decide immediate / buffered / throttled and record it. Every key is the
  recipient's ({u:OWNER} in the cluster layout).

  Step 1 of 2 (coalesce.ts, "ingest"): the outbox is in another slot, so this script does not
  queue the group; it returns the due time and the caller queues it with coalesceQueue-2.lua.

  Time: "now" is the caller's store clock, passed in ARGV[1]/ARGV[2] — the Redis server clock in
  production (RedisServerClock tracks TIME), a manual clock in tests — so the caller can compute
  the bucket, the group id and every key, and tests can drive buckets without waiting. Bucket
  and deadline are the caller's floor(now / window) and (bucket + 1) * window.

  Input:
    KEYS[1] coalesce:disp:{eventId}:{recipient}  STRING i:{gid} | b:{gid}
    KEYS[2] coalesce:g:{gid}                      HASH the group of the current bucket
    KEYS[3] coalesce:hll:{gid}                    HLL distinct buffered actors
    KEYS[4] coalesce:throttle:{owner}             HASH tokens, ts (ms)
    KEYS[5] coalesce:emitted:{owner}              ZSET emitted notification -> send time (s)

    ARGV[1]  now, ms
    ARGV[2]  now, unix seconds (floor of ARGV[1] / 1000)
    ARGV[3]  gid of the current bucket, {type}:{owner}:{target}:{bucket}
    ARGV[4]  due: the bucket deadline, unix seconds
    ARGV[5]  expires_at: now + group_ttl (logical lifetime), unix seconds
    ARGV[6]  immediate limit
    ARGV[7]  physical TTL of a group with buffered work (group_ttl + grace), s
    ARGV[8]  disposition TTL, also of an immediate-only group (window + grace), s
    ARGV[9]  token-bucket capacity
    ARGV[10] seconds per refilled token
    ARGV[11] token-bucket TTL, s
    ARGV[12] daily window, s
    ARGV[13] daily cap
    ARGV[14] emission-window TTL (daily window + grace), s
    ARGV[15] type (like | repost | zap)
    ARGV[16] owner (recipient hex)
    ARGV[17] target (e:{id} | a:{kind:pubkey:d})
    ARGV[18] actor (event author hex)
    ARGV[19] event id
    ARGV[20] event kind
    ARGV[21] event created_at, unix seconds
    ARGV[22] ref_event_id, or ""
    ARGV[23] ref_address, or "" (then ARGV[24..26] are ignored)
    ARGV[24] ref_kind
    ARGV[25] ref_author
    ARGV[26] ref_dtag

  Output:
    {code, gid, replayed, due}: code 1 immediate, 2 buffered, 3 buffered because the recipient's
    budget (token bucket or emission cap) was spent; replayed 1 when a stored disposition was
    returned (then code is 1 or 2 and nothing was written). gid is the group the event belongs
    to: on a replay the original one, which may be an earlier bucket's. due is ARGV[4] when this
    call buffered the event (the caller queues the gid there), else 0.
]]
local rcall = redis.call
--- @include "recipientBudget"

local stored = rcall("GET", KEYS[1])
if stored then
  local code, storedGid = string.match(stored, "^(%a):(.+)$")
  if code == "i" then return {1, storedGid, 1, 0} end
  if code == "b" then return {2, storedGid, 1, 0} end
  -- Anything else is not a disposition this service wrote: decide afresh and overwrite it.
end

local nowMsText = ARGV[1]
local nowMs = tonumber(nowMsText)
local now = tonumber(ARGV[2])
local gid = ARGV[3]
local group = KEYS[2]
local limit = tonumber(ARGV[6])
local groupTtl = ARGV[7]
local dispTtl = ARGV[8]
local actor = ARGV[18]
local eventId = ARGV[19]

local sendNow = false
local throttled = false
local immediate = tonumber(rcall("HGET", group, "immediate")) or 0
-- The budget is consulted only while an immediate slot is free: a buffered event costs nothing.
if immediate < limit then
  local capacity = tonumber(ARGV[9])
  local emitted = trimEmitted(KEYS[5], now, tonumber(ARGV[12]))
  local tokens = refilledTokens(KEYS[4], nowMs, capacity, tonumber(ARGV[10]))
  if emitted >= tonumber(ARGV[13]) then
    throttled = true
  elseif tokens >= 1 then
    tokens = tokens - 1
    sendNow = true
    recordEmission(KEYS[5], now, eventId, ARGV[14])
  else
    throttled = true
  end
  saveTokens(KEYS[4], tokens, nowMsText, ARGV[11])
end

rcall("HSETNX", group, "due", ARGV[4])
rcall("HSETNX", group, "expires_at", ARGV[5])
rcall("HSETNX", group, "owner", ARGV[16])
rcall("HSETNX", group, "type", ARGV[15])
rcall("HSETNX", group, "target", ARGV[17])
rcall("HSETNX", group, "event_kind", ARGV[20])
if ARGV[22] ~= "" then rcall("HSETNX", group, "ref_event_id", ARGV[22]) end
if ARGV[23] ~= "" then
  rcall("HSETNX", group, "ref_address", ARGV[23])
  rcall("HSETNX", group, "ref_kind", ARGV[24])
  rcall("HSETNX", group, "ref_author", ARGV[25])
  rcall("HSETNX", group, "ref_dtag", ARGV[26])
end

if sendNow then
  rcall("HINCRBY", group, "immediate", 1)
  -- An immediate must never shorten the life of a group that already holds buffered work.
  if (tonumber(rcall("HGET", group, "pending")) or 0) > 0 then
    rcall("EXPIRE", group, groupTtl)
  else
    rcall("EXPIRE", group, dispTtl)
  end
  rcall("SET", KEYS[1], "i:" .. gid, "EX", dispTtl)
  return {1, gid, 0, 0}
end

rcall("HINCRBY", group, "pending", 1)
rcall("HSETNX", group, "first_actor", actor)
rcall("HSETNX", group, "first_event", eventId)
local createdAt = tonumber(ARGV[21]) or 0
if createdAt > (tonumber(rcall("HGET", group, "last_at")) or 0) then
  rcall("HSET", group, "last_at", ARGV[21])
end
rcall("PFADD", KEYS[3], actor)
rcall("EXPIRE", group, groupTtl)
rcall("EXPIRE", KEYS[3], groupTtl)
rcall("SET", KEYS[1], "b:" .. gid, "EX", dispTtl)
local due = tonumber(ARGV[4])
if throttled then return {3, gid, 0, due} end
return {2, gid, 0, due}
