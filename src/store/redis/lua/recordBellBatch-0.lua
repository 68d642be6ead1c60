--[[
  Write the outcomes of a batch of bells of one video in one step: rate windows and newPost
  coordinate records ("1" with their TTLs), and claims extended (compare-and-expire) or released
  (compare-and-delete) on their owner token. The activity of the delivered tokens is refreshed
  beside it, per token shard (tokens.ts refreshTokenActivity).

  The record and claim keys vary with the batch, so the caller passes them, fully built and with
  its client key prefix, as ARGV; nothing here builds a key name. Not Redis Cluster safe.

  Input:
    KEYS: none

    ARGV[1] claim TTL, seconds (extended claims)
    ARGV[2] rate-window TTL, seconds
    ARGV[3] coordinate-record TTL, seconds
    ARGV[4] E: claims to extend;  ARGV[5] R: claims to release;  ARGV[6] W: rate windows to open;
    ARGV[7] C: coordinate records to write
    ARGV[8] and on: E pairs (claim key, owner), R pairs (claim key, owner), W rate-window keys,
              C record keys, in that order

  Output:
    {extended, released}: how many claims were extended and released (others were no longer the
    caller's)
]]
local rcall = redis.call
local e, r, w, c = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local i = 8
local extended, released = 0, 0
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
return { extended, released }
