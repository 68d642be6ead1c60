/**
 * Key names of the per-client rate limits (port-rate-limits.ts): one section of
 * `createRedisKeys` (`../keys.ts`), the only place keys are built.
 */

// ---- request counters (port-rate-limits.ts) --------------------------------------------------

/*
 * | key                        | type   | value                                                       |
 * |----------------------------|--------|-------------------------------------------------------------|
 * | `ratelimit:NAME:KEY`       | STRING | requests of KEY (a client address, a pubkey, an API key id) counted in its window; `EX` the window, by `rateLimitIncr-1.lua` |
 *
 * The same names in both layouts: each step touches one key, so a key lives in whichever slot its
 * name hashes to (NAME and KEY never hold `{`: names are the service's own, keys are addresses,
 * hex pubkeys and ids). rate-limiter-flexible joins the prefix below and KEY with a `:`.
 */
export function rateLimitKeys() {
  return {
    /** The prefix of counter `name`'s keys, as rate-limiter-flexible's `keyPrefix`. */
    rateLimitKeyPrefix: (name: string): string => `ratelimit:${name}`,
  };
}
