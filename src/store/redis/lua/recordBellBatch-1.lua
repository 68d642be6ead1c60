--[[
  Write the outcomes of a batch of bells of one video in one step: rate windows and newPost
  coordinate records ("1" with their TTLs), claims extended (compare-and-expire) or released
  (compare-and-delete) on their owner token, and the activity of delivered tokens refreshed
  (ZADD XX GT: never re-creates a removed token, never lowers a score).

  The record and claim keys vary with the batch, so the caller passes them, fully built and with
  its client key prefix, as ARGV; nothing here builds a key name. Not Redis Cluster safe.

  Input:
    KEYS[1] stale_tokens  ZSET token -> last activity, unix seconds

    ARGV[1] claim TTL, seconds (extended claims)
    ARGV[2] rate-window TTL, seconds
    ARGV[3] coordinate-record TTL, seconds
    ARGV[4] token activity to write: the start of the current activity slice, unix seconds
    ARGV[5] E: claims to extend;  ARGV[6] R: claims to release;  ARGV[7] W: rate windows to open;
    ARGV[8] C: coordinate records to write;  ARGV[9] T: tokens to refresh
    ARGV[10] and on: E pairs (claim key, owner), R pairs (claim key, owner), W rate-window keys,
               C record keys, T tokens, in that order

  Output:
    {extended, released, refreshed}: how many claims were extended and released (others were no
    longer the caller's) and how many token scores moved
]]
local rcall = redis.call
local e, r, w, c, t = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local i = 10
local extended, released, refreshed = 0, 0, 0
for _ = 1, e do
  if rcall("GET", ARGV[i]) == ARGV[i + 1] then
    extended = extended + rcall("EXPIRE", ARGV[i], ARGV[1])
  end
  i = i + 2
end
for _ = 1, r do
  if rcall("GET", ARGV[i]) == ARGV[i + 1] then
    released = released + rcall("DEL", ARGV[i])
  end
  i = i + 2
end
for _ = 1, w do
  rcall("SET", ARGV[i], "1", "EX", ARGV[2])
  i = i + 1
end
for _ = 1, c do
  rcall("SET", ARGV[i], "1", "EX", ARGV[3])
  i = i + 1
end
for _ = 1, t do
  refreshed = refreshed + rcall("ZADD", KEYS[1], "XX", "GT", "CH", ARGV[4], ARGV[i])
  i = i + 1
end
return { extended, released, refreshed }
