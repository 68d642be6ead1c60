/**
 * Bells on Redis: the notify-list index, the bell rate window, and the fan-out job queue (one
 * Lua script per transition, `now` from the store clock). Key layout and formats are
 * divine-push-service's in the divine layout (see `keys.ts`), so a divine Redis's subscriptions
 * and queued jobs are taken over as they are.
 *
 * Replacing a notify list touches the subscriber's keys and one watcher set per creator, which a
 * Redis Cluster spreads over many slots, so it runs as one step per slot (the same steps on a
 * single Redis), in the order that keeps the forward index (`notify_subs`) a superset of the
 * reverse index (`notify_watchers:*`) at every step (seed 000):
 *
 * 1. subscriber slot (`beginNotifyListReplacement-3`): check the version (stale lists stop here),
 *    take the subscriber's replacement lease, ADD the incoming creators to the forward index, and
 *    return the dropped ones (stored but not incoming);
 * 2. each incoming creator's slot: `SADD notify_watchers:{creator} subscriber` (all at once);
 * 3. each dropped creator's slot: `SREM notify_watchers:{creator} subscriber` (all at once);
 * 4. subscriber slot (`finishNotifyListReplacement-3`): remove the dropped creators from the
 *    forward index, record the list's version and give the lease back, at once.
 *
 * A crash between two steps loses nothing: the forward index still names every creator whose
 * watcher set may name the subscriber, so the list's retry (the inbound queue retries the event;
 * an exact replay passes the version check and may take its own lease again) finds the same
 * dropped creators and finishes, and any later list reconciles the superset. The version is
 * recorded only by the last step, so a list that failed midway is not taken for the applied one.
 * Every step is idempotent (SADD, SREM, a lease valued by the list's version), so a retry is too.
 *
 * The lease stands in for the single script's atomicity across replicas: two different lists of
 * one subscriber applied at once could otherwise interleave their steps (an older list's removal
 * landing after a newer list's addition). A second list meeting a live lease is refused with
 * {@link NotifyListBusyError}, which the inbound queue retries. A step that fails gives the lease
 * back; one left by a crash ends after {@link NOTIFY_LIST_LEASE_MS}.
 */
import { decodeFanoutJob, encodeFanoutJob } from '../fanout-job-codec.ts';
import { isHexPubkey } from '../../nostr/tags.ts';
import type { ClaimedFanoutJob, FanoutJob, FanoutJobStats, NotifyListOutcome, NotifyListReplacement, WatcherPage } from '../port-bells.ts';
import { WATCHER_WALK_START } from '../port-bells.ts';
import type { RecipientClaim } from '../port.ts';
import { expirySeconds, type RedisContext } from './context.ts';

/** The value divine stores in a rate-window marker. */
const RATE_WINDOW_VALUE = '1';
/**
 * How long one list replacement holds its subscriber's lease: far above the few round trips it
 * takes (a capped list), and the longest a crashed replacement delays the subscriber's next list.
 */
export const NOTIFY_LIST_LEASE_MS = 30_000;

/** Another list of the same subscriber is being applied; retry once it is done (the inbound queue does). */
export class NotifyListBusyError extends Error {
  constructor(
    readonly subscriber: string,
    readonly retryAfterMs: number,
  ) {
    super(`replaceNotifySubscriptions: another notify list of ${subscriber.slice(0, 16)}… is being applied; retry in ${retryAfterMs} ms`);
    this.name = 'NotifyListBusyError';
  }
}

function requireWholeSeconds(operation: string, createdAt: number): void {
  if (!Number.isSafeInteger(createdAt) || createdAt < 0)
    throw new RangeError(`${operation}: createdAt must be non-negative whole seconds, got ${createdAt}`);
}

function requireDelay(operation: string, delayMs: number): void {
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new RangeError(`${operation}: delayMs must be a finite number ≥ 0, got ${delayMs}`);
}

/** What step 1 of a replacement answered. */
export type NotifyListBegin = { outcome: 'stale' } | { outcome: 'busy'; retryAfterMs: number } | { outcome: 'go'; dropped: string[] };

/** The version string a list is stored and leased under. */
const versionOf = (replacement: NotifyListReplacement): string => `${replacement.createdAt}:${replacement.eventId.toLowerCase()}`;

/** Step 1 (subscriber slot): version check, lease, incoming creators added to the forward index. */
export async function beginNotifyListReplacement(ctx: RedisContext, replacement: NotifyListReplacement): Promise<NotifyListBegin> {
  const { subscriber, creators, createdAt, eventId } = replacement;
  requireWholeSeconds('replaceNotifySubscriptions', createdAt);
  const reply = (await ctx.scripts.run(
    'beginNotifyListReplacement',
    [ctx.keys.notifySubsKey(subscriber), ctx.keys.notifySubsTsKey(subscriber), ctx.keys.notifySubsLeaseKey(subscriber)],
    [String(createdAt), eventId.toLowerCase(), NOTIFY_LIST_LEASE_MS, ...creators],
  )) as [number, ...Array<string | number>];
  const [status, ...rest] = reply;
  if (status === 0) return { outcome: 'stale' };
  if (status === -1) return { outcome: 'busy', retryAfterMs: Math.max(0, Number(rest[0] ?? 0)) };
  return { outcome: 'go', dropped: rest.map(String) };
}

/** Steps 2 and 3 (creator slots): the subscriber joins every incoming creator's watchers, then leaves every dropped one's. */
export async function updateNotifyWatchers(
  ctx: RedisContext,
  subscriber: string,
  creators: readonly string[],
  dropped: readonly string[],
): Promise<void> {
  await Promise.all(creators.map((creator) => ctx.redis.sadd(ctx.keys.notifyWatchersKey(creator), subscriber)));
  await Promise.all(dropped.map((creator) => ctx.redis.srem(ctx.keys.notifyWatchersKey(creator), subscriber)));
  // Step 4 records the list, and the inbound event carrying it is acknowledged after it: the
  // watcher sets reach the replicas first (`replication.ts`), or a failover could leave the
  // subscriber out of a creator's watchers until their next list.
  await ctx.replication.afterWrites(() => [...creators, ...dropped].map((creator) => ctx.keys.notifyWatchersKey(creator)));
}

/** Step 4 (subscriber slot): the dropped creators leave the forward index, the version is recorded; false when the lease was no longer this list's. */
export async function finishNotifyListReplacement(
  ctx: RedisContext,
  replacement: NotifyListReplacement,
  dropped: readonly string[],
): Promise<boolean> {
  const { subscriber } = replacement;
  const finished = await ctx.scripts.run(
    'finishNotifyListReplacement',
    [ctx.keys.notifySubsKey(subscriber), ctx.keys.notifySubsTsKey(subscriber), ctx.keys.notifySubsLeaseKey(subscriber)],
    [versionOf(replacement), ...dropped],
  );
  return finished === 1;
}

/** Give a failed replacement's lease back (compare-and-delete on its version), so a retry need not wait it out. */
async function releaseNotifyListLease(ctx: RedisContext, replacement: NotifyListReplacement): Promise<void> {
  await ctx.scripts.run('releaseClaim', [ctx.keys.notifySubsLeaseKey(replacement.subscriber)], [versionOf(replacement)]);
}

export async function replaceNotifySubscriptions(ctx: RedisContext, replacement: NotifyListReplacement): Promise<NotifyListOutcome> {
  const begun = await beginNotifyListReplacement(ctx, replacement);
  if (begun.outcome === 'stale') return 'stale';
  if (begun.outcome === 'busy') throw new NotifyListBusyError(replacement.subscriber, begun.retryAfterMs);
  try {
    await updateNotifyWatchers(ctx, replacement.subscriber, replacement.creators, begun.dropped);
  } catch (err) {
    // The forward index holds every creator touched (a superset); the retry redoes the steps.
    await releaseNotifyListLease(ctx, replacement).catch(() => undefined);
    throw err;
  }
  if (!(await finishNotifyListReplacement(ctx, replacement, begun.dropped))) {
    // The lease ran out first: the dropped creators stay in the forward index (a superset), for
    // the next list of this subscriber to reconcile.
    ctx.logger.warn(
      { subscriber: replacement.subscriber, dropped: begun.dropped.length },
      'notify list applied after its lease ran out; its version was not recorded',
    );
  }
  return 'applied';
}

export async function notifySubscriptions(ctx: RedisContext, subscriber: string): Promise<string[]> {
  return ctx.redis.smembers(ctx.keys.notifySubsKey(subscriber));
}

/** Between a cursor's issuing server (`run_id`) and its SSCAN position, in the cluster layout's tagged cursors. */
const CURSOR_TAG_SEPARATOR = ':';

/**
 * One SSCAN page. The cluster layout tags each cursor with the server process that issued it and
 * restarts a walk whose server changed (`readWatcherPage-1.lua`: a failover or a restart moves
 * the set to a process whose hash table a foreign cursor would walk wrongly, skipping watchers).
 * The divine layout keeps divine's plain cursors, so jobs stay readable by either writer.
 */
async function scanWatchers(ctx: RedisContext, creator: string, cursor: string, count: number): Promise<[string, string[]]> {
  const key = ctx.keys.notifyWatchersKey(creator);
  if (ctx.keys.layout !== 'cluster') return ctx.redis.sscan(key, cursor, 'COUNT', count);
  const separator = cursor.indexOf(CURSOR_TAG_SEPARATOR);
  const [tag, position] = separator < 0 ? ['', cursor] : [cursor.slice(0, separator), cursor.slice(separator + 1)];
  const [run, next, members, restarted] = (await ctx.scripts.run('readWatcherPage', [key], [tag, position, count])) as [
    string,
    string,
    string[],
    number,
  ];
  if (restarted === 1)
    ctx.logger.warn({ creator }, 'watcher walk continued on another Redis process; restarting it (claims skip the watchers done)');
  // The walk's end stays the plain start cursor, as the port defines it.
  return [next === WATCHER_WALK_START ? WATCHER_WALK_START : `${run}${CURSOR_TAG_SEPARATOR}${next}`, members];
}

export async function notifyWatchersPage(ctx: RedisContext, creator: string, cursor: string, count: number): Promise<WatcherPage> {
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`notifyWatchersPage: count must be a positive integer, got ${count}`);
  const [nextCursor, members] = await scanWatchers(ctx, creator, cursor, count);
  const watchers: string[] = [];
  const seen = new Set<string>();
  for (const member of members) {
    const shown = member.slice(0, 16);
    if (!isHexPubkey(member)) {
      ctx.logger.warn({ creator, member: shown }, 'skipping a notify watcher that is not a hex pubkey');
      continue;
    }
    if (seen.has(member)) continue;
    seen.add(member);
    watchers.push(member);
  }
  return { watchers, nextCursor: nextCursor === '' ? WATCHER_WALK_START : nextCursor };
}

export async function isNotifyWatcher(ctx: RedisContext, creator: string, subscriber: string): Promise<boolean> {
  return (await ctx.redis.sismember(ctx.keys.notifyWatchersKey(creator), subscriber)) === 1;
}

export async function removeNotifyWatcher(ctx: RedisContext, creator: string, subscriber: string): Promise<boolean> {
  return (await ctx.redis.srem(ctx.keys.notifyWatchersKey(creator), subscriber)) === 1;
}

export async function extendRecipientDelivery(ctx: RedisContext, claim: RecipientClaim, ttlSecs: number): Promise<boolean> {
  const ttl = expirySeconds('extendRecipientDelivery', ttlSecs);
  return (await ctx.scripts.run('extendClaim', [ctx.keys.recipientClaimKey(claim.eventId, claim.recipient)], [claim.owner, ttl])) === 1;
}

export async function isNewPostRateLimited(ctx: RedisContext, subscriber: string, creator: string): Promise<boolean> {
  return (await ctx.redis.exists(ctx.keys.notifyRateKey(subscriber, creator))) === 1;
}

export async function openNewPostRateWindow(ctx: RedisContext, subscriber: string, creator: string, ttlSecs: number): Promise<void> {
  // SET EX, never NX: the window restarts with each delivered bell, as divine's SETEX does.
  await ctx.redis.set(
    ctx.keys.notifyRateKey(subscriber, creator),
    RATE_WINDOW_VALUE,
    'EX',
    expirySeconds('openNewPostRateWindow', ttlSecs),
  );
}

/**
 * The shard of a queued job: its video's shard, read from the stored form; null when the member
 * does not decode (a damaged entry, looked for in every shard).
 */
function shardOfMember(ctx: RedisContext, member: string): number | null {
  const job = decodeFanoutJob(member);
  return job ? ctx.keys.fanoutShardOf(job.eventJson) : null;
}

/** The job keys that may hold `member`: its shard's, or every shard's for a damaged member. */
function jobKeysOf(ctx: RedisContext, member: string): string[] {
  const shard = shardOfMember(ctx, member);
  return shard === null ? ctx.keys.newPostFanoutJobsKeys : [ctx.keys.newPostFanoutJobsKey(shard)];
}

export async function enqueueFanoutJob(ctx: RedisContext, eventId: string, job: FanoutJob, markerTtlSecs: number): Promise<boolean> {
  const ttl = expirySeconds('enqueueFanoutJob', markerTtlSecs);
  const shard = ctx.keys.fanoutShardOf(job.eventJson);
  const keys = [ctx.keys.fanoutEnqueuedKey(shard, eventId), ctx.keys.newPostFanoutJobsKey(shard)];
  const queued = await ctx.scripts.run('enqueueFanoutJob', keys, [ttl, ctx.clock.nowMs(), encodeFanoutJob(job)]);
  // The inbound event that made the job is acknowledged next: the job reaches the replicas first.
  await ctx.replication.afterWrites(() => keys);
  return queued === 1;
}

/** The job shards with a due job, the one due longest first (every shard when there is one). */
async function shardsByOldestDue(ctx: RedisContext, nowMs: number): Promise<number[]> {
  if (ctx.keys.fanoutShards === 1) return [0];
  const heads = await Promise.all(
    ctx.keys.newPostFanoutJobsKeys.map((key) => ctx.redis.zrangebyscore(key, '-inf', nowMs, 'WITHSCORES', 'LIMIT', 0, 1)),
  );
  return heads
    .map((head, shard) => ({ shard, due: head.length === 2 ? Number(head[1]) : null }))
    .filter((head): head is { shard: number; due: number } => head.due !== null)
    .sort((a, b) => a.due - b.due)
    .map((head) => head.shard);
}

export async function claimFanoutJob(ctx: RedisContext, leaseMs: number): Promise<ClaimedFanoutJob | null> {
  requireDelay('claimFanoutJob', leaseMs);
  const nowMs = ctx.clock.nowMs();
  for (const shard of await shardsByOldestDue(ctx, nowMs)) {
    const member = await ctx.scripts.run('claimFanoutJob', [ctx.keys.newPostFanoutJobsKey(shard)], [nowMs, nowMs + Math.ceil(leaseMs)]);
    // A string: claimed. Otherwise another worker took this shard's due jobs first: the next shard.
    if (typeof member === 'string') return { member, job: decodeFanoutJob(member) };
  }
  return null;
}

export async function completeFanoutJob(ctx: RedisContext, current: ClaimedFanoutJob, successor: FanoutJob | null): Promise<void> {
  // A successor is the same video's next page, so it shares the current job's shard.
  await Promise.all(
    jobKeysOf(ctx, current.member).map((key) =>
      ctx.scripts.run('completeFanoutJob', [key], [current.member, successor ? encodeFanoutJob(successor) : '', ctx.clock.nowMs()]),
    ),
  );
}

export async function retryFanoutJob(ctx: RedisContext, current: ClaimedFanoutJob, retry: FanoutJob, delayMs: number): Promise<void> {
  requireDelay('retryFanoutJob', delayMs);
  // A retry is the same video's page, so it shares the current job's shard (a damaged current
  // job, which the worker discards rather than retries, is looked for in the retry's shard).
  const shard = shardOfMember(ctx, current.member) ?? ctx.keys.fanoutShardOf(retry.eventJson);
  await ctx.scripts.run(
    'retryFanoutJob',
    [ctx.keys.newPostFanoutJobsKey(shard)],
    [current.member, encodeFanoutJob(retry), ctx.clock.nowMs() + Math.ceil(delayMs)],
  );
}

export async function rescoreFanoutJob(ctx: RedisContext, current: ClaimedFanoutJob, delayMs: number): Promise<boolean> {
  requireDelay('rescoreFanoutJob', delayMs);
  const dueMs = ctx.clock.nowMs() + Math.ceil(delayMs);
  const found = await Promise.all(
    jobKeysOf(ctx, current.member).map(async (key) => {
      // ZADD XX CH: only an existing member, and CH makes a changed score count, so "still queued" is visible.
      if ((await ctx.redis.zadd(key, 'XX', 'CH', dueMs, current.member)) === 1) return true;
      return (await ctx.redis.zscore(key, current.member)) !== null;
    }),
  );
  return found.includes(true);
}

export async function fanoutJobStats(ctx: RedisContext): Promise<FanoutJobStats> {
  const nowMs = ctx.clock.nowMs();
  const counts = await Promise.all(
    ctx.keys.newPostFanoutJobsKeys.map((key) =>
      Promise.all([ctx.redis.zcount(key, '-inf', nowMs), ctx.redis.zcount(key, `(${nowMs}`, '+inf')]),
    ),
  );
  return {
    due: counts.reduce((sum, [due]) => sum + due, 0),
    waiting: counts.reduce((sum, [, waiting]) => sum + waiting, 0),
  };
}
