--[[
  Swap a fan-out job for its retry (the next attempt of the page, or an exhausted page's
  successor), as one step (divine's retry_fanout_job), so the queue never holds both or neither.

  Input:
    KEYS[1] new_post_fanout_jobs  ZSET job JSON -> next availability or lease deadline, ms
                                  (cluster: one shard, new_post_fanout_jobs:{f:S}, the video's)

    ARGV[1] the current job JSON
    ARGV[2] the retry job JSON
    ARGV[3] when the retry is due, ms

  Output:
    1  always
]]
local rcall = redis.call
rcall("ZADD", KEYS[1], ARGV[3], ARGV[2])
if ARGV[2] ~= ARGV[1] then
  rcall("ZREM", KEYS[1], ARGV[1])
end
return 1
