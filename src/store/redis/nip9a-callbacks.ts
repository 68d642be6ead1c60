/**
 * NIP-9a callback URLs and relay-POST receipts on Redis (port-nip9a-callbacks.ts; keys in
 * `keys.ts`). A callback is one JSON field of `nip9a:callbacks`, indexed by its secret's hash
 * (`nip9a:callback_secrets`) and by its owner (`nip9a:callbacks_of:{owner}`). In the cluster
 * layout the record, the secret index entry and the owner's list are in three slots (the
 * callback's, the secret's, the owner's), so every operation is one-key steps, the same on a
 * single Redis, in an order that is safe at every step:
 *
 * - create: (0) the idle sweep's index entry (issue 35, `idle-sweeps.ts`), (1) the record (`HSETNX`: a repeated id writes nothing), (2) the secret index
 *   (`HSETNX`; a repeated secret hash takes step 1 back), (3) the owner's list. The URL works
 *   from step 2 on; its secret is known only to the response of this call, so a crash before
 *   step 3 leaves a URL nobody holds, and a crash before step 2 a record nothing reaches.
 * - find: the secret index, then the record (whose own secret hash must match).
 * - revoke: (1) read the record and check its owner, (2) drop the secret index entry, so the URL
 *   stops working first, (3) drop the record, (4) drop it from the owner's list, (5) drop its
 *   entry of the idle sweep's index (`nip9a:callbacks_received`; one left by a crash is dropped
 *   by the sweep when it comes due, as the sweep finds no record). A crash between
 *   leaves it listed (steps 2–3: revoke again completes it) or listed without a record (step 3:
 *   lists skip it, and revoking it again drops it from the list).
 *
 * A receipt is a `SET NX EX` key taken together with the inbound enqueue by the same steps that
 * claim and queue deliveries (`claimAndEnqueue` in `deliveries.ts`), so a receipt is never
 * recorded without its item queued (or staged, and committed by the retry).
 */
import { randomUUID } from 'node:crypto';
import type { Nip9aAcceptance, Nip9aCallback } from '../port-nip9a-callbacks.ts';
import { expirySeconds, isRecord, parseJson, type RedisContext } from './context.ts';
import { claimAndEnqueue } from './deliveries.ts';

function toJson(callback: Nip9aCallback): string {
  const { id, secretHash, secretHint, owner, relay, createdAtMs } = callback;
  return JSON.stringify({ id, secretHash, secretHint, owner, relay, createdAtMs });
}

/** A stored record, or null (with a warning) when something else wrote that field. */
function fromJson(ctx: RedisContext, field: string, raw: string | null): Nip9aCallback | null {
  if (raw === null) return null;
  const value = parseJson(raw);
  if (
    !isRecord(value) ||
    typeof value.id !== 'string' ||
    typeof value.secretHash !== 'string' ||
    typeof value.secretHint !== 'string' ||
    typeof value.owner !== 'string' ||
    typeof value.relay !== 'string' ||
    typeof value.createdAtMs !== 'number'
  ) {
    ctx.logger.warn({ key: ctx.keys.nip9aCallbacksKey(field), field }, 'unreadable NIP-9a callback record; treated as absent');
    return null;
  }
  const { id, secretHash, secretHint, owner, relay, createdAtMs } = value;
  return { id, secretHash, secretHint, owner, relay, createdAtMs };
}

export async function createNip9aCallback(ctx: RedisContext, callback: Nip9aCallback): Promise<void> {
  const { id, secretHash, owner, createdAtMs } = callback;
  const recordKey = ctx.keys.nip9aCallbacksKey(id);
  // Step 0, the idle sweep's index (idle-sweeps.ts): before the record, so no record is ever
  // unindexed; an entry whose record never came is dropped by the sweep in time.
  await ctx.redis.zadd(ctx.keys.nip9aCallbackActivityKey(id), 'NX', createdAtMs, id);
  if ((await ctx.redis.hsetnx(recordKey, id, toJson(callback))) !== 1) {
    throw new Error(`createNip9aCallback: id ${id} is already stored`);
  }
  if ((await ctx.redis.hsetnx(ctx.keys.nip9aCallbackSecretsKey(secretHash), secretHash, id)) !== 1) {
    await ctx.redis.hdel(recordKey, id);
    throw new Error(`createNip9aCallback: the secret hash of ${id} is already stored`);
  }
  await ctx.redis.zadd(ctx.keys.nip9aCallbacksOfKey(owner), createdAtMs, id);
}

export async function readNip9aCallback(ctx: RedisContext, id: string): Promise<Nip9aCallback | null> {
  return fromJson(ctx, id, await ctx.redis.hget(ctx.keys.nip9aCallbacksKey(id), id));
}

export async function findNip9aCallback(ctx: RedisContext, secretHash: string): Promise<Nip9aCallback | null> {
  const id = await ctx.redis.hget(ctx.keys.nip9aCallbackSecretsKey(secretHash), secretHash);
  if (id === null) return null;
  const callback = await readNip9aCallback(ctx, id);
  return callback?.secretHash === secretHash ? callback : null;
}

export async function listNip9aCallbacks(ctx: RedisContext, owner: string): Promise<Nip9aCallback[]> {
  const ids = await ctx.redis.zrange(ctx.keys.nip9aCallbacksOfKey(owner), 0, -1);
  const callbacks = await Promise.all(ids.map((id) => readNip9aCallback(ctx, id)));
  return callbacks.filter((c): c is Nip9aCallback => c !== null && c.owner === owner);
}

export async function revokeNip9aCallback(ctx: RedisContext, owner: string, id: string): Promise<boolean> {
  const callback = await readNip9aCallback(ctx, id);
  if (callback === null) {
    // Unknown, or a revoke that died after dropping the record: finish it for the owner's list.
    await ctx.redis.zrem(ctx.keys.nip9aCallbacksOfKey(owner), id);
    return false;
  }
  if (callback.owner !== owner) return false;
  await ctx.redis.hdel(ctx.keys.nip9aCallbackSecretsKey(callback.secretHash), callback.secretHash);
  await ctx.redis.hdel(ctx.keys.nip9aCallbacksKey(id), id);
  await ctx.redis.zrem(ctx.keys.nip9aCallbacksOfKey(owner), id);
  await ctx.redis.zrem(ctx.keys.nip9aCallbackActivityKey(id), id);
  return true;
}

export async function acceptNip9aReceipts<T>(
  ctx: RedisContext,
  ttlSecs: number,
  entries: ReadonlyArray<Nip9aAcceptance<T>>,
): Promise<boolean[]> {
  const ttl = expirySeconds('acceptNip9aReceipts', ttlSecs);
  return claimAndEnqueue(
    ctx,
    'inbound',
    ttl,
    entries.map(({ receipt, item }) => ({
      claimKey: ctx.keys.nip9aReceiptKey(receipt.callbackId, receipt.eventId, receipt.relay),
      owner: randomUUID(),
      item,
    })),
  );
}
