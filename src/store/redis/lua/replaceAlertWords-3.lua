--[[
  Replace one user's alert words and keep the global index in step (port-inbox.ts
  replaceAlertWords): a word gained adds the user to its watcher set and one to its score in
  `alertwords`; a word lost does the reverse, and a word whose score reaches 0 leaves the index.
  Remembers the user.

  `alertwordUsers:{word}` keys depend on the stored words and cannot be declared; ARGV[1] is their
  prefix with the client's key prefix in front (keys.ts ALERT_WORD_USERS_KEY_PREFIX).

  Input:
    KEYS[1] alertwords              ZSET word -> number of watchers
    KEYS[2] user_alertwords:{pubkey} SET the user's words
    KEYS[3] inbox:{pubkey}          HASH counters (gets known = 1)

    ARGV[1] the alertwordUsers: key prefix (with the client's key prefix)
    ARGV[2] the pubkey
    ARGV[3] and on: the new words, distinct

  Output:
    the number of words the user watches now
]]
local rcall = redis.call

local prefix = ARGV[1]
local pubkey = ARGV[2]
local wanted = {}
for i = 3, #ARGV do
  wanted[ARGV[i]] = true
end
local had = {}
for _, word in ipairs(rcall("SMEMBERS", KEYS[2])) do
  had[word] = true
  if not wanted[word] then
    rcall("SREM", prefix .. word, pubkey)
    rcall("SREM", KEYS[2], word)
    if tonumber(rcall("ZINCRBY", KEYS[1], -1, word)) <= 0 then
      rcall("ZREM", KEYS[1], word)
    end
  end
end
for i = 3, #ARGV do
  local word = ARGV[i]
  if not had[word] then
    rcall("SADD", prefix .. word, pubkey)
    rcall("SADD", KEYS[2], word)
    rcall("ZINCRBY", KEYS[1], 1, word)
  end
end
rcall("HSETNX", KEYS[3], "known", "1")
return rcall("SCARD", KEYS[2])
