/**
 * Bell pages on Redis: the batched steps of one fan-out page — the gate read and the outcome
 * writes one Lua script per chunk of watchers (`readBellWatchers-2`, `recordBellBatch-1`), the
 * claims one pipeline — so a page of 1,000 watchers costs a handful of round trips instead of a
 * dozen per watcher. Keys and values are the
 * ones the single-watcher operations use (`keys.ts`), so both paths read and write the same
 * records.
 *
 * Why the keys travel in ARGV: their number varies with the batch, and a script's key count is
 * fixed by its file name. They are built here with `keys.ts` and given the client's key prefix
 * (which ioredis adds to KEYS only), so a test prefix still reaches every key and no script
 * builds a key name. Like divine's notify-list script, this is single-instance Redis only.
 */
import type { BellBatch, BellWatcherState, VideoCoordinate } from '../port-bells.ts';
import type { RecipientClaim } from '../port.ts';
import { expirySeconds, prefixed, type RedisContext } from './context.ts';
import { parseKinds } from './misc.ts';
import { activitySliceStartSecs, devicesFromListReply } from './tokens.ts';

const BELL_RECORD_TYPE = 'newPost';
/**
 * Watchers per script call: bounds how long one call keeps Redis busy (a few milliseconds), since
 * Redis runs nothing else while a script runs.
 */
export const BELL_SCRIPT_CHUNK = 500;

type WatcherReply = [(string | null)[], string | null, number, number];

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

export async function readBellWatchers(
  ctx: RedisContext,
  video: VideoCoordinate,
  watchers: readonly string[],
): Promise<BellWatcherState[]> {
  const key = prefixed(ctx);
  const { owner, dTag } = video;
  const replies = await Promise.all(
    chunks(watchers).map(async (chunk) => {
      const args = chunk.flatMap((w) => [
        key(ctx.keys.userTokensKey(w)),
        key(ctx.keys.userPreferencesKey(w)),
        key(ctx.keys.videoRecordKey(BELL_RECORD_TYPE, owner, dTag, w)),
        key(ctx.keys.legacyVideoRecordKey(owner, dTag, w)),
        key(ctx.keys.notifyRateKey(w, owner)),
      ]);
      return (await ctx.scripts.run(
        'readBellWatchers',
        [ctx.keys.tokenTimezoneOffsetsKey, ctx.keys.tokenDevicesKey],
        args,
      )) as WatcherReply[];
    }),
  );
  return replies.flat().map(([devices, rawPreferences, recorded, rateLimited], i) => {
    const watcher = watchers[i] ?? '';
    return {
      watcher,
      devices: devicesFromListReply(ctx, devices),
      preferenceKinds: preferenceKindsOf(ctx, watcher, rawPreferences),
      alreadyNotified: recorded === 1,
      rateLimited: rateLimited === 1,
    };
  });
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
  await ctx.scripts.run(
    'recordBellBatch',
    [ctx.keys.staleTokensKey],
    [
      claimTtl,
      rateTtl,
      recordTtl,
      activitySliceStartSecs(ctx),
      extend.length / 2,
      release.length / 2,
      windows.length,
      records.length,
      tokens.length,
      ...extend,
      ...release,
      ...windows,
      ...records,
      ...tokens,
    ],
  );
}
