/**
 * Bell pages on Redis: the batched steps of one fan-out page — the gate read (concurrent
 * per-slot reads: one script per watcher for its tokens, preferences and records in the
 * watcher's slot, then the token records per token shard), the
 * claims one pipeline, the outcome writes one call per watcher issued at once — so a page of
 * 1,000 watchers costs a handful of round trips instead of a dozen per watcher. Keys and values
 * are the ones the single-watcher operations use (`keys.ts`), so both paths read and write the
 * same records.
 *
 * In the divine layout (one Redis) a page's watchers are read, and their outcomes written, one
 * script per chunk of {@link BELL_SCRIPT_CHUNK} (`readBellWatchers-n`, `recordBellOutcomes-n`):
 * a fan-out then sends no command per push (issue 39). In the cluster layout every watcher is in
 * a slot of its own, so each keeps its one-slot script, as follows.
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
 * The divine layout's first round: every watcher's slot and rate window, {@link BELL_SCRIPT_CHUNK}
 * watchers a call (`readBellWatchers-n`), the chunks at once.
 */
async function readWatcherChunks(
  ctx: RedisContext,
  watchers: readonly string[],
  keysOf: (watcher: string) => string[],
): Promise<[WatcherSlot[], number[]]> {
  const answers = await Promise.all(
    chunks(watchers).map(async (chunk) => (await ctx.scripts.run('readBellWatchers', chunk.flatMap(keysOf), [])) as unknown[]),
  );
  const slots: WatcherSlot[] = [];
  const rateLimited: number[] = [];
  for (const flat of answers)
    for (let i = 0; i < flat.length; i += 5) {
      slots.push([flat[i], flat[i + 1], flat[i + 2], flat[i + 3]] as WatcherSlot);
      rateLimited.push(flat[i + 4] as number);
    }
  return [slots, rateLimited];
}

/**
 * The gate state of each watcher, in two rounds: per watcher one script for what its slot holds
 * (token set, removal intents, preferences, the video's two coordinate records;
 * `readBellWatcher-5`) beside one EXISTS of its rate window (the creator's slot), all issued
 * concurrently so a page goes out in one write per node; then the candidates' token records per
 * token shard, kept or forgotten as tokens.ts does. In the divine layout the first round is one
 * script per chunk of watchers, rate windows included ({@link readWatcherChunks}).
 */
export async function readBellWatchers(
  ctx: RedisContext,
  video: VideoCoordinate,
  watchers: readonly string[],
): Promise<BellWatcherState[]> {
  const { owner, dTag } = video;
  const distinct = [...new Set(watchers)];
  const slotKeys = (w: string): string[] => [
    ctx.keys.userTokensKey(w),
    ctx.keys.userTokensForgettingKey(w),
    ctx.keys.userPreferencesKey(w),
    ctx.keys.videoRecordKey(BELL_RECORD_TYPE, owner, dTag, w),
    ctx.keys.legacyVideoRecordKey(owner, dTag, w),
  ];
  const [slots, rateLimited] =
    ctx.keys.layout === 'divine'
      ? await readWatcherChunks(ctx, distinct, (w) => [...slotKeys(w), ctx.keys.notifyRateKey(w, owner)])
      : await Promise.all([
          Promise.all(distinct.map(async (w) => (await ctx.scripts.run('readBellWatcher', slotKeys(w), [])) as WatcherSlot)),
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
  const outcomes: BellOutcome[] = [
    // A delivered bell's claim stays as it was taken (BellBatch.delivered).
    ...batch.delivered.map(({ claim }) => ({
      recipient: claim.recipient,
      action: 'keep' as const,
      claim,
      recordSecs: recordTtl,
      restartRate: true,
    })),
    ...batch.failed.map((claim) => ({ recipient: claim.recipient, action: 'extend' as const, claim, recordSecs: 0, restartRate: false })),
    ...batch.released.map((claim) => ({
      recipient: claim.recipient,
      action: 'release' as const,
      claim,
      recordSecs: 0,
      restartRate: false,
    })),
    ...batch.rateLimited.map((recipient) => ({
      recipient,
      action: 'keep' as const,
      claim: null,
      recordSecs: recordTtl,
      restartRate: false,
    })),
  ];
  const tokenActivity = refreshTokenActivity(
    ctx,
    batch.delivered.flatMap((bell) => bell.tokens),
  );
  const claimKey = (o: BellOutcome) => ctx.keys.recipientClaimKey(o.claim?.eventId ?? '', o.recipient);
  const recordKey = (o: BellOutcome) => ctx.keys.videoRecordKey(BELL_RECORD_TYPE, owner, dTag, o.recipient);
  if (ctx.keys.layout === 'divine') {
    // One script per chunk: claims, records and rate windows of up to BELL_SCRIPT_CHUNK watchers.
    await Promise.all([
      ...chunks(outcomes).map((chunk) =>
        ctx.scripts.run(
          'recordBellOutcomes',
          chunk.flatMap((o) => [claimKey(o), recordKey(o), ctx.keys.notifyRateKey(o.recipient, owner)]),
          [claimTtl, rateTtl, ...chunk.flatMap((o) => [o.action, o.claim?.owner ?? '', o.recordSecs, o.restartRate ? 1 : 0])],
        ),
      ),
      tokenActivity,
    ]);
    return;
  }
  await Promise.all([
    // One watcher's writes in its slot: the claim (extended, released or untouched) and maybe the record.
    ...outcomes.map((o) =>
      ctx.scripts.run('recordBellOutcome', [claimKey(o), recordKey(o)], [o.action, o.claim?.owner ?? '', claimTtl, o.recordSecs]),
    ),
    // SET EX, never NX: the window restarts with each delivered bell, as divine's SETEX does.
    ...outcomes.filter((o) => o.restartRate).map((o) => ctx.redis.set(ctx.keys.notifyRateKey(o.recipient, owner), '1', 'EX', rateTtl)),
    tokenActivity,
  ]);
}

/** One watcher's outcome as recordBellBatch writes it. */
interface BellOutcome {
  recipient: string;
  action: 'extend' | 'release' | 'keep';
  claim: RecipientClaim | null;
  /** Coordinate-record TTL, seconds; 0 writes none. */
  recordSecs: number;
  /** A delivered bell restarts the watcher's rate window for the creator. */
  restartRate: boolean;
}
