--[[
  Store a new send of the send API (port-sends.ts), scheduled and due at its send time, together
  with its idempotency record when it has one; when that key is still held, write nothing and
  answer the first send's id and request hash.

  Input:
    KEYS[1] send:{app}:{id}        HASH request, lane, state, sendAtMs, createdAtMs, offset
    KEYS[2] send_idem:{app}:{key}  STRING JSON {"id","hash"}, EX the idempotency TTL
                                    (any key when there is no idempotency key; then unused)
    KEYS[3] sends:due:{lane}       ZSET "{app}:{id}" -> due time, ms (the lane of the send's priority)

    ARGV[1] request JSON (stored as given)
    ARGV[2] sendAt, ms
    ARGV[3] now, ms
    ARGV[4] record lifetime, ms (> 0)
    ARGV[5] due member "{app}:{id}"
    ARGV[6] "1" with an idempotency key, "0" without
    ARGV[7] idempotency record JSON {"id","hash"} (with a key)
    ARGV[8] idempotency lifetime, whole seconds (with a key)
    ARGV[9] the lane (critical | normal | low)

  Output:
    {1}              created
    {0, held JSON}   the key is held: the stored {"id","hash"}; nothing written
    error reply      the send id exists already
]]
local rcall = redis.call

if ARGV[6] == "1" then
  local held = rcall("GET", KEYS[2])
  if held then
    return { 0, held }
  end
end
if rcall("EXISTS", KEYS[1]) == 1 then
  return redis.error_reply("createSend: the send id exists already")
end
rcall("HSET", KEYS[1], "request", ARGV[1], "lane", ARGV[9], "state", "scheduled", "sendAtMs", ARGV[2], "createdAtMs", ARGV[3], "offset", 0)
rcall("PEXPIRE", KEYS[1], ARGV[4])
rcall("ZADD", KEYS[3], ARGV[2], ARGV[5])
if ARGV[6] == "1" then
  rcall("SET", KEYS[2], ARGV[7], "EX", ARGV[8])
end
return { 1 }
