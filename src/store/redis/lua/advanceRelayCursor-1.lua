--[[
  Raise a relay's cursor (newest created_at seen) and never lower it. A stored value that is not
  a number is replaced, so a damaged field cannot wedge the cursor.

  Input:
    KEYS[1] relay_cursors  HASH relay URL -> created_at, unix seconds

    ARGV[1] relay URL
    ARGV[2] created_at, unix seconds

  Output:
    1  the cursor moved (or was created)
    0  the stored cursor is already at or above ARGV[2]
]]
local rcall = redis.call
local stored = tonumber(rcall("HGET", KEYS[1], ARGV[1]))
if stored and stored >= tonumber(ARGV[2]) then
  return 0
end
rcall("HSET", KEYS[1], ARGV[1], ARGV[2])
return 1
