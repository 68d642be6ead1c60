--[[
  Step 1 of forgetting one idle inbox user (inbox-expiry.ts, issue 35), in the user's slot: decide
  from the user's own keys, and when they are to be forgotten take their alert-word lock (so no
  replace runs between this step and the last) and delete their counters. The words are returned,
  not deleted: their set stays a superset of the watcher sets holding the user until the caller
  has taken the user out of each (steps 2 and 3), as in replaceAlertWords.

  Input:
    KEYS[1] inbox:{pubkey}                 HASH counters, known, active (ms)
    KEYS[2] user_tokens:{pubkey}           SET the user's device tokens
    KEYS[3] user_alertwords:{pubkey}       SET the user's words
    KEYS[4] user_alertwords_lock:{pubkey}  STRING the replace lock's holder

    ARGV[1] idle before, ms: a user active at or after it is kept
    ARGV[2] the sweep's lock token (uuid)
    ARGV[3] the lock's time to live, ms
    ARGV[4] the start of today, ms (a user with a device counts as active today)

  Output:
    {"device"}            a device is registered: active set to today; the caller raises the index entry
    {"active", day}       active since the cutoff (a request meanwhile): the caller raises the index entry to day
    {"busy"}              a replace holds the lock: left for the next sweep
    {"forget", word, …}   counters deleted, lock taken: the caller unwatches the words, deletes the
                          word set, drops the index entry and releases the lock
]]
local rcall = redis.call

if rcall("SCARD", KEYS[2]) > 0 then
  rcall("HSET", KEYS[1], "active", ARGV[4])
  return { "device" }
end
local active = tonumber(rcall("HGET", KEYS[1], "active") or "0") or 0
if active >= tonumber(ARGV[1]) then
  return { "active", tostring(active) }
end
if not rcall("SET", KEYS[4], ARGV[2], "NX", "PX", ARGV[3]) then
  return { "busy" }
end
rcall("DEL", KEYS[1])
local out = { "forget" }
for _, word in ipairs(rcall("SMEMBERS", KEYS[3])) do
  out[#out + 1] = word
end
return out
