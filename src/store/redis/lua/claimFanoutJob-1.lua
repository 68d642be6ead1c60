--[[
  Lease the fan-out job that has been due the longest (divine's claim_fanout_job). The lease is
  only a later score: it has no owner token, and the job returns by itself once the deadline
  passes (a crashed worker's page).

  Input:
    KEYS[1] new_post_fanout_jobs  ZSET job JSON -> next availability or lease deadline, ms
                                  (cluster: one shard, new_post_fanout_jobs:{f:S}, the video's)

    ARGV[1] now, ms
    ARGV[2] lease deadline, ms (now + lease)

  Output:
    the job JSON, now scored at the lease deadline
    false (nil)  no job is due
]]
local rcall = redis.call
local due = rcall("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, 1)
if #due == 0 then
  return false
end
rcall("ZADD", KEYS[1], ARGV[2], due[1])
return due[1]
