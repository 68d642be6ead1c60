--[[
  Step 1 of replacing a user's alert words (inbox.ts replaceAlertWords): the user's own word set
  (the forward index) grows to old ∪ new before any watcher set changes, so it stays a superset
  of the words whose watcher set holds the user. Remembers the user.

  Idempotent: SADD; a retry returns the union the first call left, whose extra words the caller's
  later steps remove.

  Input:
    KEYS[1] user_alertwords:{pubkey}  SET the user's words
    KEYS[2] inbox:{pubkey}            HASH counters (gets known = 1)

    ARGV[1] and on: the new words, distinct (possibly none)

  Output:
    the words the set held before this call
]]
local rcall = redis.call

local before = rcall("SMEMBERS", KEYS[1])
if #ARGV > 0 then
  rcall("SADD", KEYS[1], unpack(ARGV))
end
rcall("HSETNX", KEYS[2], "known", "1")
return before
