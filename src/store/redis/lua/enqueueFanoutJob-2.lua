--[[
  Queue the first page job of a video's new-post fan-out, once per event (divine's
  enqueue_initial_fanout_job). The job is added before the marker is set, so a queue write that
  fails (WRONGTYPE) does not consume the marker and a retry can still queue the job.

  Input:
    KEYS[1] fanout:enqueued:{eventId}  STRING "1" with the processed-event TTL
                                       (cluster: fanout:enqueued:{f:S}:EVENTID, S the video's shard)
    KEYS[2] new_post_fanout_jobs       ZSET   job JSON -> next availability or lease deadline, ms
                                       (cluster: new_post_fanout_jobs:{f:S}, the same slot)

    ARGV[1] marker TTL, seconds
    ARGV[2] now, ms (the job is due at once)
    ARGV[3] job JSON

  Output:
    1  queued
    0  this event was queued before (the marker exists); nothing written
]]
local rcall = redis.call
if rcall("EXISTS", KEYS[1]) == 1 then
  return 0
end
rcall("ZADD", KEYS[2], ARGV[2], ARGV[3])
rcall("SET", KEYS[1], "1", "EX", ARGV[1])
return 1
