/**
 * The rate-limit counters' Redis step (port-rate-limits.ts): the window script for every check
 * of one counter made in one turn of the event loop, as one call (per key shard in the cluster
 * layout), `rateLimitIncrMany-n.lua`. rate-limiter-flexible (`../rate-limit-counters.ts`) asks
 * for one key at a time; a busy receiver asks for a different owner on every callback, so one
 * call per check cost the service's main thread a command per request (issue 35's benchmark:
 * 4–7 % of a NIP-9a callback at saturation). Batched, a check costs a few values of a shared call.
 */
import { TurnBatcher } from '../../util/turn-batcher.ts';
import type { RateLimitIncrement } from '../rate-limit-counters.ts';
import type { RedisContext } from './context.ts';

interface Check {
  key: string;
  points: number;
}

/** The window step of counter `name` (windows of `windowSecs`), batched per turn. */
export function batchedRateLimitIncrement(ctx: RedisContext, name: string, windowSecs: number): RateLimitIncrement {
  const batcher = new TurnBatcher<Check, [number, number]>((checks) => countChecks(ctx, name, windowSecs, checks));
  return (key, points) => batcher.add({ key, points });
}

/** One script call per shard the checks fall in; `[consumed, ms until the window ends]` per check, in order. */
async function countChecks(ctx: RedisContext, name: string, windowSecs: number, checks: Check[]): Promise<Array<[number, number]>> {
  const byShard = new Map<number, number[]>();
  checks.forEach((check, index) => {
    const shard = ctx.keys.rateLimitShardOf(check.key);
    const indexes = byShard.get(shard);
    if (indexes) indexes.push(index);
    else byShard.set(shard, [index]);
  });
  const answers = new Array<[number, number]>(checks.length);
  await Promise.all(
    [...byShard.values()].map(async (indexes) => {
      const shardChecks = indexes.map((index) => checks[index] as Check);
      const counted = (await ctx.scripts.run(
        'rateLimitIncrMany',
        shardChecks.map((check) => ctx.keys.rateLimitKey(name, check.key)),
        [windowSecs, ...shardChecks.map((check) => check.points)],
      )) as number[];
      indexes.forEach((index, k) => {
        answers[index] = [counted[2 * k] as number, counted[2 * k + 1] as number];
      });
    }),
  );
  return answers;
}
