--[[
  Finish a fan-out page (divine's complete_fanout_job): queue the successor page (if any) before
  removing the current job. A race can duplicate a page, which recipient claims make harmless,
  but never lose the next one.

  Input:
    KEYS[1] new_post_fanout_jobs  ZSET job JSON -> next availability or lease deadline, ms
                                  (cluster: one shard, new_post_fanout_jobs:{f:S}, the video's)

    ARGV[1] the current job JSON
    ARGV[2] the successor job JSON, or "" when the walk is complete
    ARGV[3] now, ms (the successor is due at once)

  Output:
    1  always; an already queued successor keeps its score (ZADD NX)
]]
local rcall = redis.call
if ARGV[2] ~= "" then
  rcall("ZADD", KEYS[1], "NX", ARGV[3], ARGV[2])
end
if ARGV[2] ~= ARGV[1] then
  rcall("ZREM", KEYS[1], ARGV[1])
end
return 1
