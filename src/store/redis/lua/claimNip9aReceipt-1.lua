--[[
  Take the receipt of one relay POST (port-nip9a-callbacks.ts), the first step of
  `acceptNip9aReceipts` (nip9a-callbacks.ts): held `pending:{owner}` until its item is queued,
  then marked `{owner}` (a plain `SET XX KEEPTTL`, the third step). A receipt still pending was
  taken by a call that is queueing it now or died before it finished: the caller queues the item
  again under its deterministic id (a no-op while it is queued), so no crash loses a push.

  Input:
    KEYS[1] nip9a:receipt:{callbackId}:{eventId}:{relay}  STRING

    ARGV[1] the owner (a fresh uuid)
    ARGV[2] lifetime, whole seconds (> 0)

  Output:
    1  taken now (pending)
    2  held, still pending: queue the item again
    0  held and its item queued: a duplicate POST
]]
local rcall = redis.call

if rcall("SET", KEYS[1], "pending:" .. ARGV[1], "NX", "EX", ARGV[2]) then
  return 1
end
local held = rcall("GET", KEYS[1])
if held and string.sub(held, 1, 8) == "pending:" then
  return 2
end
return 0
