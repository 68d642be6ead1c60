--[[
  Step 1 of replacing a user's alert words (inbox.ts replaceAlertWords): take the user's replace
  lock, then grow the user's own word set (the forward index) to old ∪ new before any watcher set
  changes, so it stays a superset of the words whose watcher set holds the user. Remembers the
  user. The lock keeps two replaces of one user from interleaving their watcher steps; the caller
  releases it (releaseClaim-1.lua) after its last step, and a crashed caller's lock expires.

  Idempotent once the lock is held: SADD; a retry returns the union the first call left, whose
  extra words the caller's later steps remove.

  Input:
    KEYS[1] user_alertwords:{pubkey}       SET the user's words
    KEYS[2] inbox:{pubkey}                 HASH counters (gets known = 1)
    KEYS[3] user_alertwords_lock:{pubkey}  STRING the lock holder's token

    ARGV[1] the caller's lock token (uuid)
    ARGV[2] the lock's time to live, ms
    ARGV[3] and on: the new words, distinct (possibly none)

  Output:
    the words the set held before this call, or false (nil) when another replace holds the lock
    (nothing changed)
]]
local rcall = redis.call

if not rcall("SET", KEYS[3], ARGV[1], "NX", "PX", ARGV[2]) then
  return false
end
local before = rcall("SMEMBERS", KEYS[1])
if #ARGV > 2 then
  rcall("SADD", KEYS[1], unpack(ARGV, 3))
end
rcall("HSETNX", KEYS[2], "known", "1")
return before
