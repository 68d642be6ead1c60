/**
 * Bell pages on Redis: the batched steps of one fan-out page — the gate read (concurrent
 * per-slot reads: each watcher's devices, preferences and records in the watcher's slot), the
 * claims one pipeline, the outcome writes one call per watcher issued at once — so a page of
 * 1,000 watchers costs a handful of round trips instead of a dozen per watcher. Keys and values
 * are the ones the single-watcher operations use (`keys.ts`), so both paths read and write the
 * same records.
 *
 * The outcome writes are grouped by slot: a watcher's claim and coordinate record share the
 * watcher's slot (`recordBellOutcome-2`, every key declared), the page's rate windows the
 * creator's slot (`notify_rate:{subscriber}:{creator}`, one SET each), the token activity goes
 * through `tokens.ts`. The writes are independent (each is an idempotent overwrite or a
 * compare-and-set on an owner token), so they run at once and a retried page rewrites them.
 * */
import type { BellBatch, BellWatcherState, VideoCoordinate } from '../port-bells.ts';
import type { RecipientClaim } from '../port.ts';
import { expirySeconds, type RedisContext } from './context.ts';
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

export async function recordBellBatch(ctx: RedisContext, batch: BellBatch): Promise<void> {
  const claimTtl = expirySeconds('recordBellBatch', batch.claimTtlSecs);
  const rateTtl = expirySeconds('recordBellBatch', batch.rateLimitSecs);
  const recordTtl = expirySeconds('recordBellBatch', batch.videoRecordTtlSecs);
  const { owner, dTag } = batch.video;
  /** One watcher's writes in its slot: the claim (extended, released or untouched) and maybe the record. */
  const outcome = (recipient: string, action: 'extend' | 'release' | 'keep', claim: RecipientClaim | null, recordSecs: number) =>
    ctx.scripts.run(
      'recordBellOutcome',
      [ctx.keys.recipientClaimKey(claim?.eventId ?? '', recipient), ctx.keys.videoRecordKey(BELL_RECORD_TYPE, owner, dTag, recipient)],
      [action, claim?.owner ?? '', claimTtl, recordSecs],
    );
  await Promise.all([
    ...batch.delivered.map(({ claim }) => outcome(claim.recipient, 'extend', claim, recordTtl)),
    ...batch.failed.map((claim) => outcome(claim.recipient, 'extend', claim, 0)),
    ...batch.released.map((claim) => outcome(claim.recipient, 'release', claim, 0)),
    ...batch.rateLimited.map((recipient) => outcome(recipient, 'keep', null, recordTtl)),
    // SET EX, never NX: the window restarts with each delivered bell, as divine's SETEX does.
    ...batch.delivered.map(({ claim }) => ctx.redis.set(ctx.keys.notifyRateKey(claim.recipient, owner), '1', 'EX', rateTtl)),
    refreshTokenActivity(
      ctx,
      batch.delivered.flatMap((bell) => bell.tokens),
    ),
  ]);
}
