--[[
  appendDeliveryLog (delivery-log.ts) for one delivery-log shard, in the cluster layout: the writes
  of the MULTI the append used to send per shard (three ZADDs per entry, the day's HINCRBYs and the
  day index), as one script. Every key of the shard carries its tag `{dl:S}`, so they share one
  slot and are all declared in KEYS (their number follows the batch: a `-n.lua` script). One
  EVALSHA per shard a turn's entries fall in instead of a MULTI of 3 commands or more per entry:
  what the client builds, writes and parses per entry is a few values, not three commands. As
  atomic as the MULTI was: an entry is never half written.

  Input:
    KEYS[1] delivery_log:{appId}:{dl:S}, the first entry's app view (ZSET)
    KEYS[3i + 1], KEYS[3i + 2], KEYS[3i + 3] for entry i = 0 … n-1: its app's view
            delivery_log:{appId}:{dl:S} (ZSET), its recipient's view
            delivery_log:{appId}:{dl:S}:recipient:{pubkey} (ZSET), its notification's view
            delivery_log:{appId}:{dl:S}:notification:{id} (ZSET)
    KEYS[3n + 2j + 1], KEYS[3n + 2j + 2] for stats increment j: the day's counters
            delivery_stats:{appId}:{dl:S}:{day} (HASH) and the app's day index
            delivery_stats_days:{appId}:{dl:S} (ZSET)

    ARGV[1] the entries' time, ms (their score)
    ARGV[2] n, how many entries
    ARGV[3] the day (its score and member in the day index)
    ARGV[4 …] the n members (append id, index, entry JSON), in entry order; then four values per
            stats increment: the sent field, the sent count, the opened field, the opened count
            (a count of 0 is not written)

  Output:
    the number of entries written
]]
local rcall = redis.call

local atMs = ARGV[1]
local n = tonumber(ARGV[2])
local day = ARGV[3]
for i = 0, n - 1 do
  local member = ARGV[4 + i]
  rcall("ZADD", KEYS[3 * i + 1], atMs, member)
  rcall("ZADD", KEYS[3 * i + 2], atMs, member)
  rcall("ZADD", KEYS[3 * i + 3], atMs, member)
end
local j = 0
for a = 4 + n, #ARGV, 4 do
  local stats, days = KEYS[3 * n + 2 * j + 1], KEYS[3 * n + 2 * j + 2]
  if tonumber(ARGV[a + 1]) > 0 then
    rcall("HINCRBY", stats, ARGV[a], ARGV[a + 1])
  end
  if tonumber(ARGV[a + 3]) > 0 then
    rcall("HINCRBY", stats, ARGV[a + 2], ARGV[a + 3])
  end
  rcall("ZADD", days, day, day)
  j = j + 1
end
return n
