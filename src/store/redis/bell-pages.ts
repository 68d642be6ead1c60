/**
 * Bell pages on Redis: the batched steps of one fan-out page — the gate read (concurrent per-slot
 * reads), the outcome writes one Lua script (`recordBellBatch-0`), the claims one script per
 * chunk — so a page of 1,000 watchers costs a handful of round trips instead of a
 * dozen per watcher. Keys and values are the
 * ones the single-watcher operations use (`keys.ts`), so both paths read and write the same
 * records.
 *
 * Why the keys travel in ARGV: their number varies with the batch, and a script's key count is
 * fixed by its file name. They are built here with `keys.ts` and given the client's key prefix
 * (which ioredis adds to KEYS only), so a test prefix still reaches every key and no script
 * builds a key name. Like divine's notify-list script, this is single-instance Redis only.
 */
import { randomUUID } from 'node:crypto';
import type { BellBatch, BellWatcherState, VideoCoordinate } from '../port-bells.ts';
import type { RecipientClaim } from '../port.ts';
import { expirySeconds, prefixed, type RedisContext } from './context.ts';
import { parseKinds } from './misc.ts';
import { readDevicesOfMany, refreshTokenActivity } from './tokens.ts';

const BELL_RECORD_TYPE = 'newPost';
/**
 * Watchers per script call: bounds how long one call keeps Redis busy (a few milliseconds), since
 * Redis runs nothing else while a script runs.
 */
export const BELL_SCRIPT_CHUNK = 500;

/** Split a batch into script-sized chunks of {@link BELL_SCRIPT_CHUNK}. */
export function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += BELL_SCRIPT_CHUNK) out.push(items.slice(i, i + BELL_SCRIPT_CHUNK));
  return out;
}

/** The categories of a stored preferences document; null (the defaults) when absent or unreadable, with a warning. */
export function preferenceKindsOf(ctx: RedisContext, pubkey: string, rawPreferences: string | null): number[] | null {
  if (rawPreferences === null) return null;
  const kinds = parseKinds(rawPreferences);
  if (kinds === null) ctx.logger.warn({ pubkey }, 'user_preferences is not {"kinds":[integers]}; using defaults');
  return kinds;
}

/**
 * The gate state of each watcher: devices through tokens.ts' per-slot reads, and per watcher its
 * preferences and video records (its slot) and its rate window (the creator's slot), all issued
 * concurrently so a page goes out in one write per node.
 */
export async function readBellWatchers(
  ctx: RedisContext,
  video: VideoCoordinate,
  watchers: readonly string[],
): Promise<BellWatcherState[]> {
  const { owner, dTag } = video;
  const [devices, preferences, recorded, rateLimited] = await Promise.all([
    readDevicesOfMany(ctx, watchers),
    Promise.all(watchers.map((w) => ctx.redis.get(ctx.keys.userPreferencesKey(w)))),
    // The typed and divine's legacy type-less record of one watcher share the watcher's slot.
    Promise.all(
      watchers.map((w) =>
        ctx.redis.exists(ctx.keys.videoRecordKey(BELL_RECORD_TYPE, owner, dTag, w), ctx.keys.legacyVideoRecordKey(owner, dTag, w)),
      ),
    ),
    Promise.all(watchers.map((w) => ctx.redis.exists(ctx.keys.notifyRateKey(w, owner)))),
  ]);
  return watchers.map((watcher, i) => ({
    watcher,
    devices: devices[i] ?? [],
    preferenceKinds: preferenceKindsOf(ctx, watcher, preferences[i] ?? null),
    alreadyNotified: (recorded[i] ?? 0) > 0,
    rateLimited: rateLimited[i] === 1,
  }));
}

/** `SET dedup:{eventId}:{recipient} owner EX ttl NX` for many recipients, as claimRecipientDelivery does alone, one script per chunk. */
export async function claimRecipientDeliveries(
  ctx: RedisContext,
  eventId: string,
  recipients: readonly string[],
  ttlSecs: number,
): Promise<Array<RecipientClaim | null>> {
  if (recipients.length === 0) return [];
  const ttl = expirySeconds('claimRecipientDeliveries', ttlSecs);
  const key = prefixed(ctx);
  const claims = recipients.map((recipient) => ({ eventId, recipient, owner: randomUUID() }));
  const replies = await Promise.all(
    chunks(claims).map(async (chunk) => {
      const args: Array<string | number> = [ttl];
      for (const claim of chunk) args.push(key(ctx.keys.recipientClaimKey(eventId, claim.recipient)), claim.owner);
      return (await ctx.scripts.run('claimRecipients', [], args)) as number[];
    }),
  );
  const taken = replies.flat();
  return claims.map((claim, i) => (taken[i] === 1 ? claim : null));
}

export async function recordBellBatch(ctx: RedisContext, batch: BellBatch): Promise<void> {
  const key = prefixed(ctx);
  const claimTtl = expirySeconds('recordBellBatch', batch.claimTtlSecs);
  const rateTtl = expirySeconds('recordBellBatch', batch.rateLimitSecs);
  const recordTtl = expirySeconds('recordBellBatch', batch.videoRecordTtlSecs);
  const { owner, dTag } = batch.video;
  const claimPair = (claim: RecipientClaim) => [key(ctx.keys.recipientClaimKey(claim.eventId, claim.recipient)), claim.owner];
  const extend = [...batch.delivered.map((bell) => bell.claim), ...batch.failed].flatMap(claimPair);
  const release = batch.released.flatMap(claimPair);
  const windows = batch.delivered.map((bell) => key(ctx.keys.notifyRateKey(bell.claim.recipient, owner)));
  const records = [...batch.delivered.map((bell) => bell.claim.recipient), ...batch.rateLimited].map((r) =>
    key(ctx.keys.videoRecordKey(BELL_RECORD_TYPE, owner, dTag, r)),
  );
  const tokens = batch.delivered.flatMap((bell) => bell.tokens);
  // Token activity lives in the token shards (tokens.ts), so it is refreshed beside the script.
  await Promise.all([
    ctx.scripts.run(
      'recordBellBatch',
      [],
      [
        claimTtl,
        rateTtl,
        recordTtl,
        extend.length / 2,
        release.length / 2,
        windows.length,
        records.length,
        ...extend,
        ...release,
        ...windows,
        ...records,
      ],
    ),
    refreshTokenActivity(ctx, tokens),
  ]);
}
