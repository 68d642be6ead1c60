/**
 * Shared helpers of the sharded durable queues (`queues.ts`, `queue-dead-letters.ts`,
 * `deliveries.ts`): which shard holds an id, and running one script call per shard.
 */
import { StoreStatus, checkStatus } from '../errors.ts';
import type { QueueName } from '../port.ts';
import { shardIndexes, type QueueKeys } from './keys.ts';
import type { RedisContext } from './context.ts';

export function requireTime(operation: string, name: string, value: number): void {
  if (!Number.isFinite(value)) throw new RangeError(`${operation}: ${name} must be a finite number of ms, got ${value}`);
}

/** NotOwner and NotFound mean "not yours to change" (false); anything else negative throws. */
export function ownedResult(operation: string, code: unknown): boolean {
  const status = Number(code);
  if (status === (StoreStatus.NotOwner as number) || status === (StoreStatus.NotFound as number)) return false;
  return checkStatus(operation, status) === 1;
}

/** Every shard number of a queue, 0 … n-1. */
export function queueShards(ctx: RedisContext): number[] {
  return shardIndexes(ctx.keys.queueShards);
}

/**
 * Run `call` once per shard that holds some of `entries` (by `idOf`), concurrently, and put the
 * per-entry answers back in the entries' order. `call` answers one value per entry it was given.
 */
export async function perShard<E, R>(
  ctx: RedisContext,
  entries: readonly E[],
  idOf: (entry: E) => string,
  call: (shard: number, entries: E[]) => Promise<R[]>,
): Promise<R[]> {
  const byShard = new Map<number, number[]>();
  entries.forEach((entry, index) => {
    const shard = ctx.keys.queueShardOf(idOf(entry));
    const indexes = byShard.get(shard);
    if (indexes) indexes.push(index);
    else byShard.set(shard, [index]);
  });
  const results = new Array<R>(entries.length);
  await Promise.all(
    [...byShard].map(async ([shard, indexes]) => {
      const answers = await call(
        shard,
        indexes.map((index) => entries[index] as E),
      );
      indexes.forEach((index, k) => {
        results[index] = answers[k] as R;
      });
    }),
  );
  return results;
}

/** The keys of the shard holding item `id`. */
export function itemShardKeys(ctx: RedisContext, queue: QueueName, id: string): QueueKeys {
  return ctx.keys.queueKeys(queue, ctx.keys.queueShardOf(id));
}

/** JSON of a payload; throws when it has none (undefined, a function, a symbol). */
export function payloadJson(operation: string, id: string, value: unknown): string {
  // undefined for an undefined, function or symbol payload, whatever the lib type says.
  const payload = JSON.stringify(value) as string | undefined;
  if (payload === undefined) throw new TypeError(`${operation}: payload of ${id} is not JSON-serialisable`);
  return payload;
}
