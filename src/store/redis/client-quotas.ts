/**
 * Per-client quotas on Redis (port-client-quotas.ts): one SET per (scope, window, client), taken
 * by `takeClientQuota-1` and expiring with its window (keys.ts, "per-client quotas").
 */
import { clientQuotaWindowStartMs, type ClientQuotaRequest, type ClientQuotaResult } from '../port-client-quotas.ts';
import type { RedisContext } from './context.ts';

/**
 * Kept past the window's end by this much: the key's expiry runs on the Redis server's own clock,
 * the window on the store clock; a window's key must never vanish while the window is current.
 */
const QUOTA_EXPIRY_MARGIN_MS = 60_000;

export async function takeClientQuota(ctx: RedisContext, request: ClientQuotaRequest): Promise<ClientQuotaResult> {
  const nowMs = ctx.clock.nowMs();
  const windowStartMs = clientQuotaWindowStartMs(nowMs, request.windowMs);
  const retryAfterMs = Math.max(1, windowStartMs + request.windowMs - nowMs);
  const reply = (await ctx.scripts.run(
    'takeClientQuota',
    [ctx.keys.clientQuotaKey(request.scope, windowStartMs, request.client)],
    [request.member, request.limit, retryAfterMs + QUOTA_EXPIRY_MARGIN_MS],
  )) as [number, number];
  return { allowed: reply[0] === 1, used: reply[1], retryAfterMs };
}
