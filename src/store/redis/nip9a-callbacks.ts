/**
 * NIP-9a callback URLs and relay-POST receipts on Redis (port-nip9a-callbacks.ts; keys in
 * `keys.ts`). A callback is one JSON field of `nip9a:callbacks`, indexed by its secret's hash
 * and by its owner; a receipt is a `SET NX EX` key taken together with the inbound enqueue by the
 * same steps that claim and queue deliveries (`claimAndEnqueue` in `deliveries.ts`), so a receipt
 * is never recorded without its item queued (or staged, and committed by the retry).
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
function fromJson(ctx: RedisContext, raw: string | null): Nip9aCallback | null {
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
    ctx.logger.warn({ key: ctx.keys.nip9aCallbacksKey }, 'unreadable NIP-9a callback record; treated as absent');
    return null;
  }
  const { id, secretHash, secretHint, owner, relay, createdAtMs } = value;
  return { id, secretHash, secretHint, owner, relay, createdAtMs };
}

export async function createNip9aCallback(ctx: RedisContext, callback: Nip9aCallback): Promise<void> {
  const stored = await ctx.scripts.run(
    'createNip9aCallback',
    [ctx.keys.nip9aCallbacksKey, ctx.keys.nip9aCallbackSecretsKey, ctx.keys.nip9aCallbacksOfKey(callback.owner)],
    [callback.id, callback.secretHash, callback.createdAtMs, toJson(callback)],
  );
  if (stored !== 1) throw new Error(`createNip9aCallback: id ${callback.id} or its secret hash is already stored`);
}

export async function findNip9aCallback(ctx: RedisContext, secretHash: string): Promise<Nip9aCallback | null> {
  const raw = await ctx.scripts.run('findNip9aCallback', [ctx.keys.nip9aCallbacksKey, ctx.keys.nip9aCallbackSecretsKey], [secretHash]);
  return fromJson(ctx, typeof raw === 'string' ? raw : null);
}

export async function listNip9aCallbacks(ctx: RedisContext, owner: string): Promise<Nip9aCallback[]> {
  const ids = await ctx.redis.zrange(ctx.keys.nip9aCallbacksOfKey(owner), 0, -1);
  if (ids.length === 0) return [];
  const raws = await ctx.redis.hmget(ctx.keys.nip9aCallbacksKey, ...ids);
  return raws.map((raw) => fromJson(ctx, raw)).filter((c): c is Nip9aCallback => c !== null && c.owner === owner);
}

export async function revokeNip9aCallback(ctx: RedisContext, owner: string, id: string): Promise<boolean> {
  const deleted = await ctx.scripts.run(
    'revokeNip9aCallback',
    [ctx.keys.nip9aCallbacksKey, ctx.keys.nip9aCallbackSecretsKey, ctx.keys.nip9aCallbacksOfKey(owner)],
    [owner, id],
  );
  return deleted === 1;
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
