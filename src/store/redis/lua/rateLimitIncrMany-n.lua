--[[
  Count requests of a turn's keys of one rate-limit counter in their windows (port-rate-limits.ts,
  through rate-limiter-flexible's RateLimiterRedis: rate-limit-counters.ts, batched per turn by
  rate-limits.ts). The first request of a key opens its window (the key, with its expiry); the
  window ends when Redis expires the key, by the server's clock, so every replica counts into the
  same window. One EVALSHA per turn (per shard in the cluster layout, where every key of a call
  carries the shard's tag `{rl:NAME:S}` and so shares one slot) instead of one per request: what
  a request costs the client is a few values, not a command. Keys may repeat; each occurrence is
  counted in turn, as separate calls would be.

  Input:
    KEYS[1] ratelimit:NAME:KEY (divine) or ratelimit:{rl:NAME:S}:KEY (cluster), the first
            check's key: STRING requests of KEY counted in the window, EX the window
    KEYS[i] for i = 2 … n: the same, of the i-th check

    ARGV[1] the window, whole seconds
    ARGV[i + 1] for i = 1 … n: requests to count for KEYS[i] (1)

  Output:
    {requests counted in KEYS[1]'s window after this call's, ms until it ends, … the same for
    KEYS[2] … KEYS[n]}: 2n values
]]
local rcall = redis.call
local window = ARGV[1]
local answer = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  rcall("SET", key, 0, "EX", window, "NX")
  local consumed = rcall("INCRBY", key, ARGV[i + 1])
  local ttl = rcall("PTTL", key)
  -- A key that lost its expiry (written by hand) would count forever: give it back its window.
  if ttl == -1 then
    rcall("EXPIRE", key, window)
    ttl = 1000 * tonumber(window)
  end
  answer[2 * i - 1] = consumed
  answer[2 * i] = ttl
end
return answer
