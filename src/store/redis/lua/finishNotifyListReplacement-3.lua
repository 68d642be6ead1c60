--[[
  Step 4 (the last) of replacing a subscriber's notify list, in the subscriber's slot (bells.ts
  has the whole protocol): once the subscriber has joined every incoming creator's watchers and
  left every dropped creator's, take the dropped creators out of the forward index, record the
  list as the applied version and give the lease back, together. Only while the lease is still
  this list's: a lease that ran out may belong to another list by now, whose own diff covers what
  is left here (the forward index stays a superset either way).

  Input:
    KEYS[1] notify_subs:{subscriber}        SET    creators the subscriber bells (forward index)
    KEYS[2] notify_subs_ts:{subscriber}     STRING "created_at:event_id" of the applied list
    KEYS[3] notify_subs_lease:{subscriber}  STRING "created_at:event_id" of the list being applied

    ARGV[1] "created_at:event_id" of this list (the lease value step 1 wrote)
    ARGV[2..] the dropped creators step 1 returned

  Output:
    1  finished: the list is the applied version
    0  the lease was no longer this list's; nothing written
]]
local rcall = redis.call

if rcall("GET", KEYS[3]) ~= ARGV[1] then
  return 0
end
for i = 2, #ARGV do
  rcall("SREM", KEYS[1], ARGV[i])
end
rcall("SET", KEYS[2], ARGV[1])
rcall("DEL", KEYS[3])
return 1
