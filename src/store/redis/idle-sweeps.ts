/**
 * Storage that expires on Redis (issue 35; port-inbox.ts `forgetIdleInboxUsers`,
 * port-nip9a-callbacks.ts `touchNip9aCallback` and `forgetIdleNip9aCallbacks`). Both sweeps walk
 * an index of activity times (`inbox_active`, `nip9a:callbacks_received`; keys.ts), sharded in the
 * cluster layout, oldest first, and check each candidate against its own record before deleting.
 *
 * Forgetting one idle user is four steps, in the order replaceAlertWords keeps its invariant (the
 * user's own word set is a superset of the watcher sets holding them):
 *   1. `forgetIdleInboxUser-4`, in the user's slot: a user with a device is kept (and counts as
 *      active today); one active since the cutoff is kept; otherwise the sweep takes the user's
 *      alert-word lock, deletes their counters and reads their words;
 *   2. the user leaves the watcher set of each word (`watchAlertWord-2`, in the words' slots);
 *   3. the word set goes, and the lock is released;
 *   4. the index entry goes, unless a request raised it meanwhile (`dropIdleEntry-1`).
 * A crash at any step leaves the index entry, so the next sweep runs the steps again: step 1 finds
 * no `active` (the hash went) and takes the user again, and steps 2–4 are idempotent. A request
 * meanwhile makes the user new again (its touch recreates the hash and raises the index entry); a
 * replace of their words waits for the lock and then runs on the emptied set.
 *
 * Users remembered before this version have no index entry until their next request or device
 * registration; until then the sweep does not see them (nothing of theirs is lost, they are only
 * not yet expired).
 *
 * A callback is deleted by the steps of an owner's revoke (`nip9a-callbacks.ts`), then its index
 * entry unless raised meanwhile. A relay POST arriving in the instant between the sweep's check and
 * the delete finds a 404, as it would a moment later.
 */
import { randomUUID } from 'node:crypto';
import { inboxActivityDayMs, type IdleSweepPage } from '../port-inbox.ts';
import type { RedisContext } from './context.ts';
import { ALERT_WORDS_LOCK_TTL_MS, watchAlertWord } from './inbox.ts';
import { revokeNip9aCallback, readNip9aCallback } from './nip9a-callbacks.ts';

/** The oldest `max` index entries before `idleBeforeMs` over every shard: [shard key, member] pairs. */
async function idleCandidates(
  ctx: RedisContext,
  shardKeys: readonly string[],
  idleBeforeMs: number,
  max: number,
): Promise<Array<{ key: string; member: string; score: number }>> {
  const perShard = await Promise.all(
    shardKeys.map(async (key) => {
      const flat = await ctx.redis.zrangebyscore(key, '-inf', `(${idleBeforeMs}`, 'WITHSCORES', 'LIMIT', 0, max);
      const entries: Array<{ key: string; member: string; score: number }> = [];
      for (let i = 0; i + 1 < flat.length; i += 2) entries.push({ key, member: flat[i] as string, score: Number(flat[i + 1]) });
      return entries;
    }),
  );
  return perShard
    .flat()
    .sort((a, b) => a.score - b.score)
    .slice(0, max);
}

export async function forgetIdleInboxUsers(ctx: RedisContext, idleBeforeMs: number, max: number): Promise<IdleSweepPage> {
  const candidates = await idleCandidates(ctx, ctx.keys.inboxActivityKeys, idleBeforeMs, max);
  const todayMs = inboxActivityDayMs(ctx.clock.nowMs());
  let removed = 0;
  let settled = 0;
  for (const { key, member: pubkey } of candidates) {
    const lockToken = randomUUID();
    const lockKey = ctx.keys.userAlertWordsLockKey(pubkey);
    const decided = (await ctx.scripts.run(
      'forgetIdleInboxUser',
      [ctx.keys.inboxKey(pubkey), ctx.keys.userTokensKey(pubkey), ctx.keys.userAlertWordsKey(pubkey), lockKey],
      [idleBeforeMs, lockToken, ALERT_WORDS_LOCK_TTL_MS, todayMs],
    )) as string[];
    const [verdict, ...rest] = decided;
    // 'busy': a replace of the user's words is running; left for the next pass (not settled, so this pass ends).
    if (verdict !== 'busy') settled += 1;
    if (verdict === 'device') await ctx.redis.zadd(key, 'GT', todayMs, pubkey);
    else if (verdict === 'active') await ctx.redis.zadd(key, 'GT', Number(rest[0]), pubkey);
    else if (verdict === 'forget') {
      try {
        await Promise.all(rest.map((word) => watchAlertWord(ctx, word, pubkey, false)));
        await ctx.redis.del(ctx.keys.userAlertWordsKey(pubkey));
      } finally {
        await ctx.scripts.run('releaseClaim', [lockKey], [lockToken]);
      }
      await ctx.scripts.run('dropIdleEntry', [key], [pubkey, idleBeforeMs]);
      removed += 1;
    }
  }
  return { examined: settled, removed };
}

export async function touchNip9aCallback(ctx: RedisContext, id: string, atMs: number): Promise<void> {
  // XX: an unknown (revoked, swept) id gets no entry; GT: the time only rises.
  await ctx.redis.zadd(ctx.keys.nip9aCallbackActivityKey(id), 'XX', 'GT', atMs, id);
}

export async function forgetIdleNip9aCallbacks(ctx: RedisContext, idleBeforeMs: number, max: number): Promise<IdleSweepPage> {
  const candidates = await idleCandidates(ctx, ctx.keys.nip9aCallbackActivityKeys, idleBeforeMs, max);
  let removed = 0;
  for (const { key, member: id } of candidates) {
    // Touched since the page was read: kept.
    const score = await ctx.redis.zscore(key, id);
    if (score !== null && Number(score) >= idleBeforeMs) continue;
    const callback = await readNip9aCallback(ctx, id);
    if (callback && (await revokeNip9aCallback(ctx, callback.owner, id))) removed += 1;
    await ctx.scripts.run('dropIdleEntry', [key], [id, idleBeforeMs]);
  }
  return { examined: candidates.length, removed };
}
