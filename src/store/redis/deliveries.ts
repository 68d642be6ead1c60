/**
 * The batched steps of routing one content event on Redis: one read of every recipient's gate
 * state (`readRecipients`: their devices through tokens.ts' per-slot reads, their preferences,
 * concurrently), one claims and queues every delivery that passed (`claimAndEnqueue-5`). Keys and
 * values are the single-recipient operations' own (`keys.ts`, the queue layout of queues.ts), so
 * both paths read and write the same records.
 */
import type { ClaimedDelivery, QueueName, RecipientGateState } from '../port.ts';
import { expirySeconds, prefixed, type RedisContext } from './context.ts';
import { preferenceKindsOf } from './bell-pages.ts';
import { readDevicesOfMany } from './tokens.ts';
import { DEFAULT_LANE } from '../lanes.ts';

export async function readRecipients(ctx: RedisContext, pubkeys: readonly string[]): Promise<RecipientGateState[]> {
  if (pubkeys.length === 0) return [];
  // One GET per user (each in their own slot), issued with the device reads: one write when pipelined.
  const [devices, preferences] = await Promise.all([
    readDevicesOfMany(ctx, pubkeys),
    Promise.all(pubkeys.map((pubkey) => ctx.redis.get(ctx.keys.userPreferencesKey(pubkey)))),
  ]);
  return pubkeys.map((pubkey, i) => ({
    devices: devices[i] ?? [],
    preferenceKinds: preferenceKindsOf(ctx, pubkey, preferences[i] ?? null),
  }));
}

export async function claimAndEnqueueDeliveries<T>(
  ctx: RedisContext,
  queue: QueueName,
  ttlSecs: number,
  entries: ReadonlyArray<ClaimedDelivery<T>>,
): Promise<boolean[]> {
  if (entries.length === 0) return [];
  const ttl = expirySeconds('claimAndEnqueueDeliveries', ttlSecs);
  const key = prefixed(ctx);
  const args: Array<string | number> = [ttl, ctx.clock.nowMs()];
  for (const { claim, item } of entries) {
    // undefined for an undefined, function or symbol payload, whatever the lib type says.
    const payload = JSON.stringify(item.payload) as string | undefined;
    if (payload === undefined) throw new TypeError(`claimAndEnqueueDeliveries: payload of ${item.id} is not JSON-serialisable`);
    args.push(key(ctx.keys.recipientClaimKey(claim.eventId, claim.recipient)), claim.owner, item.id, payload, item.lane ?? DEFAULT_LANE);
  }
  const keys = ctx.keys.queueKeys(queue);
  const replies = (await ctx.scripts.run('claimAndEnqueue', [...keys.readyKeys, keys.items, keys.meta], args)) as number[];
  return entries.map((_, i) => replies[i] === 1);
}
