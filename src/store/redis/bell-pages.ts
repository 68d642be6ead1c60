/**
 * Bell pages on Redis: the batched steps of one fan-out page — the gate read (concurrent
 * per-slot reads: one script per watcher for its tokens, preferences and records in the
 * watcher's slot, then the token records per token shard), the
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
import { devicesFromRecords, intentsOf, readTokenRecords, refreshTokenActivity, type Candidates } from './tokens.ts';

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

/** One watcher's answer of `readBellWatcher-5.lua`: members, intents (flat), preferences, records found. */
type WatcherSlot = [string[], string[], string | null, number];

/**
 * The gate state of each watcher, in two rounds: per watcher one script for what its slot holds
 * (token set, removal intents, preferences, the video's two coordinate records;
 * `readBellWatcher-5`) beside one EXISTS of its rate window (the creator's slot), all issued
 * concurrently so a page goes out in one write per node; then the candidates' token records per
 * token shard, kept or forgotten as tokens.ts does.
 */
export async function readBellWatchers(
  ctx: RedisContext,
  video: VideoCoordinate,
  watchers: readonly string[],
): Promise<BellWatcherState[]> {
  const { owner, dTag } = video;
  const distinct = [...new Set(watchers)];
  const [slots, rateLimited] = await Promise.all([
    Promise.all(
      distinct.map(
        async (w) =>
          (await ctx.scripts.run(
            'readBellWatcher',
            [
              ctx.keys.userTokensKey(w),
              ctx.keys.userTokensForgettingKey(w),
              ctx.keys.userPreferencesKey(w),
              ctx.keys.videoRecordKey(BELL_RECORD_TYPE, owner, dTag, w),
              ctx.keys.legacyVideoRecordKey(owner, dTag, w),
            ],
            [],
          )) as WatcherSlot,
      ),
    ),
    Promise.all(distinct.map((w) => ctx.redis.exists(ctx.keys.notifyRateKey(w, owner)))),
  ]);
  const candidates: Candidates[] = slots.map(([members, flatIntents]) => ({ members, intents: intentsOf(flatIntents) }));
  const records = await readTokenRecords(
    ctx,
    candidates.flatMap(({ members, intents }) => [...members, ...Object.keys(intents)]),
  );
  const devicesOf = await devicesFromRecords(ctx, distinct, candidates, records);
  const index = new Map(distinct.map((w, i) => [w, i]));
  return watchers.map((watcher) => {
    const i = index.get(watcher) ?? -1;
    const slot = slots[i];
    return {
      watcher,
      devices: devicesOf.get(watcher) ?? [],
      preferenceKinds: preferenceKindsOf(ctx, watcher, slot?.[2] ?? null),
      alreadyNotified: (slot?.[3] ?? 0) > 0,
      rateLimited: rateLimited[i] === 1,
    };
  });
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
