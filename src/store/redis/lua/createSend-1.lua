--[[
  Store a new send of the send API (port-sends.ts), scheduled. The second step of `createSend`
  (sends.ts): after its idempotency key is taken, before it is made due.

  Input:
    KEYS[1] send:{app}:{id}        HASH request, lane, state, sendAtMs, createdAtMs, offset

    ARGV[1] request JSON (stored as given)
    ARGV[2] sendAt, ms
    ARGV[3] now, ms
    ARGV[4] record lifetime, ms (> 0)
    ARGV[5] the lane (critical | normal | low)

  Output:
    1  created
    0  the send id exists already; nothing written (an error for a new id, the completed first
       attempt for a retry under the same idempotency key)
]]
local rcall = redis.call

if rcall("EXISTS", KEYS[1]) == 1 then
  return 0
end
rcall("HSET", KEYS[1], "request", ARGV[1], "lane", ARGV[5], "state", "scheduled", "sendAtMs", ARGV[2], "createdAtMs", ARGV[3], "offset", 0)
rcall("PEXPIRE", KEYS[1], ARGV[4])
return 1
