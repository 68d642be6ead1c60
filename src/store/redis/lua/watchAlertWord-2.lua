--[[
  Add a user to (or remove them from) one word's watchers, and keep the word's entry in the
  alert-word index in step (steps 2 and 3 of inbox.ts replaceAlertWords): its score is the size
  of the watcher set, and a word nobody watches leaves the index. The watcher set lives in the
  slot of the word's index shard.

  Idempotent: SADD / SREM, and the score is set from SCARD, never incremented.

  Input:
    KEYS[1] alertwords             ZSET word -> number of watchers (the word's shard in the cluster)
    KEYS[2] alertwordUsers:{word}  SET the pubkeys watching the word

    ARGV[1] the word
    ARGV[2] the pubkey
    ARGV[3] "1" to watch, "0" to stop watching

  Output:
    the number of users watching the word now
]]
local rcall = redis.call

if ARGV[3] == "1" then
  rcall("SADD", KEYS[2], ARGV[2])
else
  rcall("SREM", KEYS[2], ARGV[2])
end
local watchers = rcall("SCARD", KEYS[2])
if watchers > 0 then
  rcall("ZADD", KEYS[1], watchers, ARGV[1])
else
  rcall("ZREM", KEYS[1], ARGV[1])
end
return watchers
