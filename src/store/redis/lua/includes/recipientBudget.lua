-- Included by the coalescing scripts (not a script of its own): the per-recipient budget of
-- reference §8.2 step 3 and §8.3, shared by immediates and summaries.
--   coalesce:throttle:{owner}  HASH  tokens (may be fractional), ts (ms of the last refill)
--   coalesce:emitted:{owner}   ZSET  emitted notification -> send time (unix seconds)
-- Expects `rcall` to be defined by the including script.

-- The bucket refilled lazily to nowMs: a missing bucket is full, a missing ts is now; a ts in the
-- future adds nothing (clock steps must not mint tokens).
local function refilledTokens(throttleKey, nowMs, capacity, refillSecs)
  local stored = rcall("HMGET", throttleKey, "tokens", "ts")
  local tokens = tonumber(stored[1]) or capacity
  local ts = tonumber(stored[2]) or nowMs
  local elapsed = math.max(0, nowMs - ts)
  return math.min(capacity, tokens + elapsed / (refillSecs * 1000))
end

local function saveTokens(throttleKey, tokens, nowMsText, throttleTtl)
  -- %.17g keeps the fraction exact; tostring would round to 14 digits.
  rcall("HSET", throttleKey, "tokens", string.format("%.17g", tokens), "ts", nowMsText)
  rcall("EXPIRE", throttleKey, throttleTtl)
end

-- Drop emissions that left the rolling window; returns how many remain.
local function trimEmitted(emittedKey, nowSecs, dailyWindow)
  rcall("ZREMRANGEBYSCORE", emittedKey, "-inf", nowSecs - dailyWindow)
  return rcall("ZCARD", emittedKey)
end

local function recordEmission(emittedKey, nowSecs, member, emittedTtl)
  rcall("ZADD", emittedKey, nowSecs, member)
  rcall("EXPIRE", emittedKey, emittedTtl)
end
