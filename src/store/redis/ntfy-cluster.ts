/**
 * ntfy topics in the cluster layout: the steps that replace the single-server scripts of
 * `ntfy.ts` (`appendNtfyMessage-4`, `readNtfyTopics-1`, `expireNtfyTopic-3`), each touching one
 * slot. Keys in `keys.ts`.
 *
 * Ids stay globally ordered (port-ntfy.ts: "a message committed after another always has a larger
 * id"), so one slot allocates them: the sequencer (`{n:seq}`: the head, the pending ids, the held
 * events; three small keys whatever the number of topics). The messages live in their topic's slot
 * (`{t:TOPIC}`), and the indexes that grow with topics and messages are sharded: the janitor's
 * expiry index by topic, the id → topic index by id.
 *
 * An append is three steps:
 * 1. sequencer (`allocateNtfyId-3`): allocate the id from the head and the store clock and mark it
 *    pending, with a lease of {@link NTFY_PENDING_LEASE_MS};
 * 2. at once: the id index (`HSET ntfy:ids:{n:S}`), the expiry index (`ZADD LT ntfy:expiry:{n:S}`),
 *    and the commit (`XADD` with the allocated id to the topic's stream);
 * 3. sequencer (`completeNtfyAppend-2`): the id stops being pending and its append event is
 *    published in id order (held while an earlier id is pending); with it, the expiry index is
 *    written again (below).
 * A read first takes the watermark (`readNtfyWatermark-3`): the newest id with no pending id at or
 * below it. Every message at or below it is committed, so reading the topics afterwards up to it
 * is a snapshot, and a complete read's position (the watermark) never passes a message still to
 * commit: the guarantee the single script gives by allocating and appending at once.
 *
 * Crashes: an appender that dies after step 1 leaves a pending id; readers wait for it until its
 * lease ends, then pass it (its message, if committed, is stored, but live feeds may miss it; a
 * stall of one appender longer than the lease has the same effect, and its step 3 logs it). A
 * commit refused because the topic already holds a later id (two processes appending to one topic
 * at once, committing out of order) gives the id up (step 3 without an event) and allocates again.
 * Index entries written for a commit that did not happen point at nothing: the id lookup checks the
 * stream, the janitor visits the topic and drops it. The expiry index is written before the
 * commit (a crash after it leaves a topic the janitor visits for nothing) and after it (a janitor
 * that found the topic empty and dropped it from the index in between is corrected).
 */
import { NTFY_MAX_SEQ } from '../ntfy-ids.ts';
import type { RedisContext } from './context.ts';

/** How long an allocated id may stay uncommitted before readers pass it (an appender that died). */
export const NTFY_PENDING_LEASE_MS = 10_000;
/** Allocations one append tries when its commit loses to a later id of the same topic. */
const APPEND_ATTEMPTS = 3;
/** Topics whose expired entries one janitor call visits at most (both layouts). */
export const NTFY_EXPIRY_TOPICS_PER_CALL = 100;

/** The stream entry id, the allocated position and the previous head of one committed append. */
export interface ClusterAppend {
  ms: number;
  seq: number;
  expiresMs: number;
}

/** The append event of a message (format in `keys.ts`). */
export function appendEvent(previous: string, entryId: string, expiresMs: number, topic: string, contentJson: string): string {
  return `1 ${previous} ${entryId} ${expiresMs} ${topic.length} ${topic}${contentJson}`;
}

/** Redis' answer to an XADD whose id is not above the stream's last one. */
function isIdTooSmall(err: unknown): boolean {
  return err instanceof Error && err.message.includes('equal or smaller');
}

/**
 * The commit step of an append (step 2): write the message under `entryId`; false when there is
 * nothing to write any more (a scheduled message another process delivered), which gives the id up.
 * Throws Redis' error when the topic already holds a later id.
 */
export type ClusterCommit = (entryId: string, expiresMs: number) => Promise<boolean>;

/** The ordinary commit: the message to its topic's stream. */
function streamCommit(ctx: RedisContext, topic: string, contentJson: string): ClusterCommit {
  return async (entryId, expiresMs) => {
    await ctx.redis.xadd(ctx.keys.ntfyTopicKey(topic), entryId, 'm', contentJson, 'x', String(expiresMs));
    return true;
  };
}

/** Append in three steps (see the module comment); null when `commit` found nothing to write. */
export async function appendInCluster(
  ctx: RedisContext,
  channel: string,
  topic: string,
  contentJson: string,
  ttlMs: number,
  commitStep: ClusterCommit = streamCommit(ctx, topic, contentJson),
): Promise<ClusterAppend | null> {
  const { keys } = ctx;
  for (let attempt = 1; ; attempt++) {
    const nowMs = ctx.clock.nowMs();
    const [ms, seq, previous, member] = (await ctx.scripts.run(
      'allocateNtfyId',
      [keys.ntfyHeadKey, keys.ntfyPendingKey, keys.ntfyHeldKey],
      [nowMs, NTFY_MAX_SEQ, NTFY_PENDING_LEASE_MS, channel],
    )) as [number, number, string, string];
    const entryId = `${ms}-${seq}`;
    const expiresMs = ms + ttlMs;
    const expiryKey = keys.ntfyExpiryKeyOf(topic);
    const [, , commit] = await Promise.allSettled([
      ctx.redis.hset(keys.ntfyIdsKeyOf(entryId), entryId, topic),
      ctx.redis.zadd(expiryKey, 'LT', expiresMs, topic),
      commitStep(entryId, expiresMs),
    ]);
    const committed = commit.status === 'fulfilled' && commit.value;
    const event = committed ? appendEvent(previous, entryId, expiresMs, topic, contentJson) : '';
    const [completed] = await Promise.all([
      ctx.scripts.run('completeNtfyAppend', [keys.ntfyPendingKey, keys.ntfyHeldKey], [member, event, ctx.clock.nowMs(), channel]),
      committed ? ctx.redis.zadd(expiryKey, 'LT', expiresMs, topic) : null,
    ]);
    // Nothing to write: the id is given up (step 3 without an event); the index entries point at nothing.
    if (commit.status === 'fulfilled' && !commit.value) return null;
    if (commit.status === 'fulfilled') {
      // The publisher is answered once its message is on the replicas too: a failover right after
      // the answer must not take the message with it (a shortfall fails the publish, which the
      // publisher may send again).
      await ctx.replication.afterWrites(() => [keys.ntfyTopicKey(topic), keys.ntfyIdsKeyOf(entryId), expiryKey, keys.ntfyHeadKey]);
      if (completed !== 1)
        ctx.logger.warn({ topic, entryId }, 'ntfy append committed after its pending lease ran out; live feeds may miss it');
      return { ms, seq, expiresMs };
    }
    if (!isIdTooSmall(commit.reason) || attempt >= APPEND_ATTEMPTS) throw commit.reason;
  }
}

/**
 * ntfy's `Cache: no` in the cluster layout: allocate the id and complete it with its event (expiry
 * 0), committing nothing. Returns the allocated position.
 */
export async function announceInCluster(
  ctx: RedisContext,
  channel: string,
  topic: string,
  contentJson: string,
): Promise<{ ms: number; seq: number }> {
  const { keys } = ctx;
  const [ms, seq, previous, member] = (await ctx.scripts.run(
    'allocateNtfyId',
    [keys.ntfyHeadKey, keys.ntfyPendingKey, keys.ntfyHeldKey],
    [ctx.clock.nowMs(), NTFY_MAX_SEQ, NTFY_PENDING_LEASE_MS, channel],
  )) as [number, number, string, string];
  const event = appendEvent(previous, `${ms}-${seq}`, 0, topic, contentJson);
  await ctx.scripts.run('completeNtfyAppend', [keys.ntfyPendingKey, keys.ntfyHeldKey], [member, event, ctx.clock.nowMs(), channel]);
  return { ms, seq };
}

/** The read position of the cluster (see the module comment): an entry id `ms-seq`, or null before any id settled. */
export async function readWatermark(ctx: RedisContext, channel: string): Promise<string | null> {
  const { keys } = ctx;
  const watermark = await ctx.scripts.run(
    'readNtfyWatermark',
    [keys.ntfyHeadKey, keys.ntfyPendingKey, keys.ntfyHeldKey],
    [ctx.clock.nowMs(), channel],
  );
  return typeof watermark === 'string' ? watermark : null;
}

/** One range of a read: a topic's entries from `start` (inclusive), at most `count`. */
export interface TopicRange {
  topic: string;
  start: string;
  count: number;
}

/**
 * The watermark, then every range up to it (one XRANGE per topic, issued at once: the cluster
 * client batches them per node). Replies are in `ranges` order.
 */
export async function readRangesInCluster(
  ctx: RedisContext,
  channel: string,
  ranges: readonly TopicRange[],
): Promise<{ head: string | null; replies: unknown[] }> {
  const head = await readWatermark(ctx, channel);
  if (head === null) return { head, replies: ranges.map(() => []) };
  const replies = await Promise.all(
    ranges.map((range) => ctx.redis.xrange(ctx.keys.ntfyTopicKey(range.topic), range.start, head, 'COUNT', range.count)),
  );
  return { head, replies };
}

/** The janitor's pass over the sharded expiry index; returns how many messages were deleted. */
export async function expireInCluster(ctx: RedisContext, limit: number): Promise<number> {
  const { keys } = ctx;
  const nowMs = ctx.clock.nowMs();
  const shards = await Promise.all(
    keys.ntfyExpiryKeys.map((key) => ctx.redis.zrangebyscore(key, '-inf', nowMs, 'LIMIT', 0, NTFY_EXPIRY_TOPICS_PER_CALL)),
  );
  let deleted = 0;
  for (const topic of shards.flat().slice(0, NTFY_EXPIRY_TOPICS_PER_CALL)) {
    if (deleted >= limit) break;
    const [next, ...ids] = (await ctx.scripts.run('trimNtfyTopic', [keys.ntfyTopicKey(topic)], [nowMs, limit - deleted])) as [
      number | string,
      ...string[],
    ];
    deleted += ids.length;
    await Promise.all(ids.map((id) => ctx.redis.hdel(keys.ntfyIdsKeyOf(id), id)));
    await reindexTopic(ctx, topic, Number(next), nowMs);
  }
  return deleted;
}

/** Write a trimmed topic's expiry back to its index shard (see trimNtfyTopic-1.lua for `next`). */
async function reindexTopic(ctx: RedisContext, topic: string, next: number, nowMs: number): Promise<void> {
  const expiryKey = ctx.keys.ntfyExpiryKeyOf(topic);
  // Entries left behind the limit: keep the topic due, so the next pass continues.
  if (next !== 0) {
    await ctx.redis.zadd(expiryKey, next > 0 ? next : nowMs, topic);
    return;
  }
  await ctx.redis.zrem(expiryKey, topic);
  // An append may have committed between the trim and the removal: keep such a topic indexed
  // (due now; the next pass re-indexes it by its oldest entry). The append writes the index after
  // its commit as well, which covers a commit after this look.
  if ((await ctx.redis.xlen(ctx.keys.ntfyTopicKey(topic))) > 0) await ctx.redis.zadd(expiryKey, 'LT', nowMs, topic);
}
