--[[
  readBellWatchers (bell-pages.ts), first round for one watcher: what the watcher's slot holds for
  the bell's gates, in one call. The watcher's token set, removal intents, preferences and the
  video's two coordinate records (typed, and divine's legacy type-less one) share the watcher's
  tag (`{u:PUBKEY}` in the cluster layout), so one script reads them where four commands
  (SMEMBERS, HGETALL, GET, EXISTS) did: the per-watcher commands of a fan-out page, which the
  client builds, writes and parses, drop to one. The candidates' records (readTokenRecords-3.lua
  per token shard), the keep-or-forget of each token (tokens.ts) and the rate window (the
  creator's slot) are the caller's. Read only.

  Input:
    KEYS[1] user_tokens:{u:PUBKEY}             SET of the watcher's tokens
    KEYS[2] user_tokens_forgetting:{u:PUBKEY}  HASH token -> removal intent id
    KEYS[3] user_preferences:{u:PUBKEY}        STRING, preferences JSON
    KEYS[4] the watcher's typed coordinate record of the video (dedup:34236:newPost:…)
    KEYS[5] divine's legacy type-less coordinate record of the video (dedup:34236:…)

    ARGV: none

  Output:
    {members, intents as a flat field/value array, preferences JSON or false,
     how many of the two records exist (0, 1 or 2)}
]]
local rcall = redis.call
return { rcall("SMEMBERS", KEYS[1]), rcall("HGETALL", KEYS[2]), rcall("GET", KEYS[3]), rcall("EXISTS", KEYS[4], KEYS[5]) }
