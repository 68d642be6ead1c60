--[[
  Count requests of one key in its rate-limit window (port-rate-limits.ts, through
  rate-limiter-flexible's RateLimiterRedis: rate-limit-counters.ts). The first request of a key
  opens the window (the key, with its expiry); the window ends when Redis expires the key, by the
  server's clock, so every replica counts into the same window.

  Input:
    KEYS[1] ratelimit:{name}:{key}   STRING requests counted in the window, EX the window

    ARGV[1] requests to count (1)
    ARGV[2] the window, whole seconds

  Output:
    {requests counted in the window after this one, ms until the window ends}
]]
local rcall = redis.call
rcall("SET", KEYS[1], 0, "EX", ARGV[2], "NX")
local consumed = rcall("INCRBY", KEYS[1], ARGV[1])
local ttl = rcall("PTTL", KEYS[1])
-- A key that lost its expiry (written by hand) would count forever: give it back its window.
if ttl == -1 then
  rcall("EXPIRE", KEYS[1], ARGV[2])
  ttl = 1000 * tonumber(ARGV[2])
end
return {consumed, ttl}
