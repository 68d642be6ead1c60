--[[
  Complete a digest (port-quiet-hours.ts): subtract the counts it carried; drop the user from the
  schedule when nothing is left, else make the rest due at once.

  Input:
    KEYS[1] digest:{pubkey}  HASH type -> count (cluster: digest:{d:S}:PUBKEY)
    KEYS[2] digests:due      ZSET pubkey -> due, ms (cluster: digests:due:{d:S}, the pubkey's shard: one slot)

    ARGV[1] pubkey
    ARGV[2] now, ms
    ARGV[3..] type, count, type, count, ...

  Output:
    the number of types still held
]]
local rcall = redis.call

for i = 3, #ARGV, 2 do
  local left = rcall("HINCRBY", KEYS[1], ARGV[i], -tonumber(ARGV[i + 1]))
  if left <= 0 then
    rcall("HDEL", KEYS[1], ARGV[i])
  end
end
local remaining = rcall("HLEN", KEYS[1])
if remaining == 0 then
  rcall("ZREM", KEYS[2], ARGV[1])
else
  rcall("ZADD", KEYS[2], ARGV[2], ARGV[1])
end
return remaining
