--[[
  appendDeliveryLog (delivery-log.ts) in one script, for the divine layout only: the same writes
  the cluster layout sends as one script per log shard (appendDeliveryLogShard-n.lua: three ZADDs
  per entry, the day's HINCRBYs and the day index), for every shard at once. One EVALSHA for the
  whole batch, atomic; the delivery stage appends one such batch per turn.

  The keys cannot be declared (their number varies), so the caller passes them, fully built and
  with its client key prefix, in ARGV. Not Redis Cluster safe: the cluster layout never calls it
  (DIVINE_LAYOUT_ONLY_SCRIPTS).

  Input:
    KEYS: none

    ARGV[1] the entries' time, ms (their score)
    ARGV[2] n, how many entries follow
    ARGV[3] and on: four values per entry: delivery_log:{appId} (ZSET), its recipient's
            delivery_log_recipient key (ZSET), its notification's delivery_log_notification key
            (ZSET), the member (append id, index, entry JSON); then seven values per stats
            increment: delivery_stats:{appId}:{day} (HASH), the sent field, the sent count, the
            opened field, the opened count (a count of 0 is not written), delivery_stats_days:{appId}
            (ZSET), the day

  Output:
    the number of entries written
]]
local rcall = redis.call

local atMs = ARGV[1]
local n = tonumber(ARGV[2])
local last = 2 + 4 * n
for i = 3, last, 4 do
  local member = ARGV[i + 3]
  rcall("ZADD", ARGV[i], atMs, member)
  rcall("ZADD", ARGV[i + 1], atMs, member)
  rcall("ZADD", ARGV[i + 2], atMs, member)
end
for i = last + 1, #ARGV, 7 do
  if tonumber(ARGV[i + 2]) > 0 then
    rcall("HINCRBY", ARGV[i], ARGV[i + 1], ARGV[i + 2])
  end
  if tonumber(ARGV[i + 4]) > 0 then
    rcall("HINCRBY", ARGV[i], ARGV[i + 3], ARGV[i + 4])
  end
  rcall("ZADD", ARGV[i + 5], ARGV[i + 6], ARGV[i + 6])
end
return n
