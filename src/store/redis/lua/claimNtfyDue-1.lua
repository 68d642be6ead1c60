--[[
  Claim due scheduled ntfy messages in one shard of the due index (ntfy-scheduled.ts): the
  members due at or before now, moved to the lease deadline so no other process takes them while
  this one delivers. A member the claimant never settles (it died) is due again at the deadline;
  delivery itself is exactly once whatever happens here (the entry leaves its topic's hash in the
  same script that commits the message).

  Input:
    KEYS[1] ntfy:due (divine) or ntfy:due:{n:S} (cluster)  ZSET "<scheduled id> <topic>" -> due ms

    ARGV[1] now, ms (store clock)
    ARGV[2] lease deadline, ms
    ARGV[3] most members to claim

  Output:
    { member, ... } claimed, oldest due first
]]
local rcall = redis.call

local due = rcall("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do
  rcall("ZADD", KEYS[1], "XX", ARGV[2], member)
end
return due
