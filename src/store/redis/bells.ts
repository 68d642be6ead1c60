/**
 * Bells on Redis: the notify-list index (`replaceNotifySubscriptions-2.lua` and plain reads), the
 * bell rate window, and the fan-out job queue (one Lua script per transition, `now` from the
 * store clock). Key layout and formats are divine-push-service's (see `keys.ts`), so a divine
 * Redis's subscriptions and queued jobs are taken over as they are.
 */
import { decodeFanoutJob, encodeFanoutJob } from '../fanout-job-codec.ts';
import { isHexPubkey } from '../../nostr/tags.ts';
import type { ClaimedFanoutJob, FanoutJob, FanoutJobStats, NotifyListOutcome, NotifyListReplacement, WatcherPage } from '../port-bells.ts';
import { WATCHER_WALK_START } from '../port-bells.ts';
import type { RecipientClaim } from '../port.ts';
import { expirySeconds, type RedisContext } from './context.ts';

/** The value divine stores in a rate-window marker. */
const RATE_WINDOW_VALUE = '1';

function requireWholeSeconds(operation: string, createdAt: number): void {
  if (!Number.isSafeInteger(createdAt) || createdAt < 0)
    throw new RangeError(`${operation}: createdAt must be non-negative whole seconds, got ${createdAt}`);
}

function requireDelay(operation: string, delayMs: number): void {
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new RangeError(`${operation}: delayMs must be a finite number ≥ 0, got ${delayMs}`);
}

/** The reverse-index prefix as the script must write it: ioredis adds its keyPrefix to KEYS only. */
function watchersKeyPrefix(ctx: RedisContext): string {
  return `${ctx.redis.options.keyPrefix ?? ''}${ctx.keys.NOTIFY_WATCHERS_KEY_PREFIX}`;
}

export async function replaceNotifySubscriptions(ctx: RedisContext, replacement: NotifyListReplacement): Promise<NotifyListOutcome> {
  const { subscriber, creators, createdAt, eventId } = replacement;
  requireWholeSeconds('replaceNotifySubscriptions', createdAt);
  const applied = await ctx.scripts.run(
    'replaceNotifySubscriptions',
    [ctx.keys.notifySubsKey(subscriber), ctx.keys.notifySubsTsKey(subscriber)],
    [String(createdAt), watchersKeyPrefix(ctx), subscriber, eventId.toLowerCase(), ...creators],
  );
  return applied === 1 ? 'applied' : 'stale';
}

export async function notifySubscriptions(ctx: RedisContext, subscriber: string): Promise<string[]> {
  return ctx.redis.smembers(ctx.keys.notifySubsKey(subscriber));
}

export async function notifyWatchersPage(ctx: RedisContext, creator: string, cursor: string, count: number): Promise<WatcherPage> {
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`notifyWatchersPage: count must be a positive integer, got ${count}`);
  const [nextCursor, members] = await ctx.redis.sscan(ctx.keys.notifyWatchersKey(creator), cursor, 'COUNT', count);
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

export async function enqueueFanoutJob(ctx: RedisContext, eventId: string, job: FanoutJob, markerTtlSecs: number): Promise<boolean> {
  const ttl = expirySeconds('enqueueFanoutJob', markerTtlSecs);
  const queued = await ctx.scripts.run(
    'enqueueFanoutJob',
    [ctx.keys.fanoutEnqueuedKey(eventId), ctx.keys.newPostFanoutJobsKey],
    [ttl, ctx.clock.nowMs(), encodeFanoutJob(job)],
  );
  return queued === 1;
}

export async function claimFanoutJob(ctx: RedisContext, leaseMs: number): Promise<ClaimedFanoutJob | null> {
  requireDelay('claimFanoutJob', leaseMs);
  const nowMs = ctx.clock.nowMs();
  const member = await ctx.scripts.run('claimFanoutJob', [ctx.keys.newPostFanoutJobsKey], [nowMs, nowMs + Math.ceil(leaseMs)]);
  if (typeof member !== 'string') return null;
  return { member, job: decodeFanoutJob(member) };
}

export async function completeFanoutJob(ctx: RedisContext, current: ClaimedFanoutJob, successor: FanoutJob | null): Promise<void> {
  await ctx.scripts.run(
    'completeFanoutJob',
    [ctx.keys.newPostFanoutJobsKey],
    [current.member, successor ? encodeFanoutJob(successor) : '', ctx.clock.nowMs()],
  );
}

export async function retryFanoutJob(ctx: RedisContext, current: ClaimedFanoutJob, retry: FanoutJob, delayMs: number): Promise<void> {
  requireDelay('retryFanoutJob', delayMs);
  await ctx.scripts.run(
    'retryFanoutJob',
    [ctx.keys.newPostFanoutJobsKey],
    [current.member, encodeFanoutJob(retry), ctx.clock.nowMs() + Math.ceil(delayMs)],
  );
}

export async function rescoreFanoutJob(ctx: RedisContext, current: ClaimedFanoutJob, delayMs: number): Promise<boolean> {
  requireDelay('rescoreFanoutJob', delayMs);
  // ZADD XX CH: only an existing member, and CH makes a changed score count, so "still queued" is visible.
  const changed = await ctx.redis.zadd(ctx.keys.newPostFanoutJobsKey, 'XX', 'CH', ctx.clock.nowMs() + Math.ceil(delayMs), current.member);
  if (changed === 1) return true;
  return (await ctx.redis.zscore(ctx.keys.newPostFanoutJobsKey, current.member)) !== null;
}

export async function fanoutJobStats(ctx: RedisContext): Promise<FanoutJobStats> {
  const nowMs = ctx.clock.nowMs();
  const replies = await ctx.redis
    .multi()
    .zcount(ctx.keys.newPostFanoutJobsKey, '-inf', nowMs)
    .zcount(ctx.keys.newPostFanoutJobsKey, `(${nowMs}`, '+inf')
    .exec();
  const count = (index: number): number => {
    const reply = replies?.[index];
    if (!reply || reply[0]) throw reply?.[0] ?? new Error('fanoutJobStats: MULTI was aborted');
    return Number(reply[1]);
  };
  return { due: count(0), waiting: count(1) };
}
