/**
 * The per-user push throttle on Redis (port-throttle.ts): one hash per user and window,
 * `push_throttle:{pubkey}:{windowStartSecs}`, changed only by `takeThrottleSlot-1.lua`.
 */
import { throttleWindowStartMs, type ThrottleDecision, type ThrottleWindow } from '../port-throttle.ts';
import type { RedisContext } from './context.ts';

/** Windows a key outlives its start by: its own, then one more so it is readable to the end. */
const WINDOWS_KEPT = 2;

function windowKey(ctx: RedisContext, pubkey: string, windowSecs: number): { key: string; startMs: number } {
  const startMs = throttleWindowStartMs(ctx.clock.nowMs(), windowSecs);
  return { key: ctx.keys.pushThrottleKey(pubkey, startMs / 1000), startMs };
}

export async function takeThrottleSlot(ctx: RedisContext, pubkey: string, limit: number, windowSecs: number): Promise<ThrottleDecision> {
  const { key, startMs } = windowKey(ctx, pubkey, windowSecs);
  const [allowed, pushed, withheld] = (await ctx.scripts.run('takeThrottleSlot', [key], [limit, WINDOWS_KEPT * windowSecs])) as [
    number,
    number,
    number,
  ];
  return { allowed: allowed === 1, window: { startMs, pushed, withheld } };
}

export async function readThrottleWindow(ctx: RedisContext, pubkey: string, windowSecs: number): Promise<ThrottleWindow> {
  const { key, startMs } = windowKey(ctx, pubkey, windowSecs);
  const [pushed, withheld] = await ctx.redis.hmget(key, 'pushed', 'withheld');
  return { startMs, pushed: Number(pushed ?? 0), withheld: Number(withheld ?? 0) };
}
