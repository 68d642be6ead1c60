/**
 * The user's inbox on Redis (port-inbox.ts), in Twitarr's layout (keys.ts, "the user's inbox"):
 * one hash per user with a total and a `_viewed` field per type, the `alertwords` index with one
 * watcher set per word, announcements in a hash with an expiry index, and live hints on the
 * `inbox:hints` channel, published by the scripts that change a counter.
 *
 * Slots (keys.ts): a user's keys share `{u:PUBKEY}`; a word's watcher set shares its index
 * shard's slot; the announcements share one slot. Every script touches one of them:
 * - counting and marking viewed read the active announcement ids first (a plain read of the
 *   announcements' slot) and pass them to the user's script, which needs them only for the badge
 *   in its hint; a badge read is a per-user pipeline beside that read;
 * - replacing alert words is four steps in an order that keeps one invariant — the user's own word
 *   set (`user_alertwords`) is a superset of the words whose watcher set holds the user:
 *   1. take the user's replace lock and widen the user's set to old ∪ new (returns old);
 *   2. add the user to the watchers of every new word, and 3. remove them from the watchers of
 *      every old word not kept (concurrently: the two sets of words are disjoint);
 *   4. narrow the user's set to the new words (SREM of the removed ones), and release the lock.
 *   Each step is idempotent (SADD, SREM, scores set from SCARD). A crash at any point leaves the
 *   user's set holding every word they still watch, so the next replace (its step 3 works from
 *   that set) removes what the crashed one left; meanwhile the user may get alerts for a word
 *   on its way out, never miss one they asked for once step 2 ran. The lock (per user, expiring)
 *   keeps two replaces of one user (a 3083 and an API call at once) from interleaving a watch and
 *   an unwatch of one word, which would leave the user watching a word outside their set.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import {
  ALERT_WORDS_CEILING,
  INBOX_TYPES,
  inboxActivityDayMs,
  inboxCountsFrom,
  isInboxType,
  type Announcement,
  type InboxCountEntry,
  type InboxCounts,
  type InboxHint,
  type InboxType,
} from '../port-inbox.ts';
import { expirySeconds, isRecord, parseJson, prefixed, type RedisContext } from './context.ts';
import { inboxHintChannel } from './keys.ts';

/** The live hints' channel, with the client's key prefix (PUBLISH is not prefixed by ioredis). */
export function hintChannel(ctx: RedisContext): string {
  return inboxHintChannel(ctx.redis.options.keyPrefix ?? '');
}

/**
 * Remember the user and record today's activity: the user's hash first (the truth the idle sweep
 * checks), then, once a day per user, the index entry the sweep finds them by (`idle-sweeps.ts`).
 */
export async function rememberInboxUser(ctx: RedisContext, pubkey: string): Promise<void> {
  const dayMs = inboxActivityDayMs(ctx.clock.nowMs());
  const raised = await ctx.scripts.run('touchInboxUser', [ctx.keys.inboxKey(pubkey)], [dayMs]);
  if (raised === 1) await ctx.redis.zadd(ctx.keys.inboxActivityKey(pubkey), 'GT', dayMs, pubkey);
}

export async function countInboxNotifications(
  ctx: RedisContext,
  entries: readonly InboxCountEntry[],
  ttlSecs: number,
): Promise<(number | null)[]> {
  if (entries.length === 0) return [];
  const ttl = expirySeconds('countInboxNotifications', ttlSecs);
  const ids = await activeIds(ctx);
  const channel = hintChannel(ctx);
  if (ctx.keys.layout === 'divine') return countInOneCall(ctx, entries, ttl, channel, ids);
  // Concurrent, one script per entry: entries of one recipient go to one node in order, so a
  // repeated entry finds its mark taken and the totals come back in entry order.
  const replies = await Promise.all(
    entries.map((entry) =>
      ctx.scripts.run(
        'countInbox',
        [
          ctx.keys.inboxCountedKey(entry.countKey, entry.recipient),
          ctx.keys.inboxKey(entry.recipient),
          ctx.keys.userTokensKey(entry.recipient),
        ],
        [ttl, entry.type, entry.recipient, channel, ...ids],
      ),
    ),
  );
  return replies.map((value) => (typeof value === 'number' ? value : null));
}

/**
 * The divine layout's count: every entry in one script call (`countInboxMany-0`), in entry order,
 * each counted as `countInbox-3` counts it; one round trip per batch instead of one script per
 * entry (every recipient's keys are on the one server).
 */
async function countInOneCall(
  ctx: RedisContext,
  entries: readonly InboxCountEntry[],
  ttl: number,
  channel: string,
  ids: readonly string[],
): Promise<(number | null)[]> {
  const prefix = prefixed(ctx);
  const args: Array<string | number> = [ttl, channel, ids.length, ...ids];
  for (const entry of entries) {
    args.push(
      prefix(ctx.keys.inboxCountedKey(entry.countKey, entry.recipient)),
      prefix(ctx.keys.inboxKey(entry.recipient)),
      prefix(ctx.keys.userTokensKey(entry.recipient)),
      entry.type,
      entry.recipient,
    );
  }
  const replies = (await ctx.scripts.run('countInboxMany', [], args)) as unknown[];
  return entries.map((_, i) => {
    const value = replies[i];
    return typeof value === 'number' ? value : null;
  });
}

/** Active announcement ids, as Redis returns them (decimal strings). */
export async function activeIds(ctx: RedisContext): Promise<string[]> {
  return ctx.redis.zrangebyscore(ctx.keys.activeAnnouncementsKey, `(${ctx.clock.nowMs()}`, '+inf');
}

/** A user's counters from their hash fields and the active announcement ids. */
function countsOf(read: (field: string) => string | null | undefined, ids: readonly string[]): InboxCounts {
  const number = (field: string): number => {
    const value = Number(read(field) ?? 0);
    return Number.isFinite(value) ? value : 0;
  };
  const highWater = number('announcement');
  const fresh = ids.filter((id) => Number(id) > highWater).length;
  return inboxCountsFrom((type) => ({ total: number(type), viewed: number(`${type}_viewed`) }), fresh, ids.length);
}

export async function readInboxCounts(ctx: RedisContext, pubkey: string): Promise<InboxCounts> {
  const [hash, ids] = await Promise.all([ctx.redis.hgetall(ctx.keys.inboxKey(pubkey)), activeIds(ctx)]);
  return countsOf((field) => hash[field], ids);
}

/** The hash fields a badge is made of: every counted type's total and viewed, and the high-water mark. */
const BADGE_FIELDS: readonly string[] = INBOX_TYPES.flatMap((type) => (type === 'announcement' ? [type] : [type, `${type}_viewed`]));

export async function readInboxBadges(ctx: RedisContext, pubkeys: readonly string[]): Promise<number[]> {
  if (pubkeys.length === 0) return [];
  // One read per user (each in their own slot) beside the announcements' read, all concurrent.
  const [ids, ...hashes] = await Promise.all([
    activeIds(ctx),
    ...pubkeys.map((pubkey) => ctx.redis.hmget(ctx.keys.inboxKey(pubkey), ...BADGE_FIELDS)),
  ]);
  return hashes.map((values) => countsOf((field) => values[BADGE_FIELDS.indexOf(field)], ids).totalNew);
}

export async function markInboxViewed(ctx: RedisContext, pubkey: string, types: readonly InboxType[]): Promise<InboxCounts> {
  const distinct = INBOX_TYPES.filter((type) => types.includes(type));
  const ids = await activeIds(ctx);
  await ctx.scripts.run('markInboxViewed', [ctx.keys.inboxKey(pubkey)], [hintChannel(ctx), pubkey, ids.length, ...ids, ...distinct]);
  return readInboxCounts(ctx, pubkey);
}

/** Steps 2 and 3 of {@link replaceAlertWords}: one word's watcher set and index entry. */
export async function watchAlertWord(ctx: RedisContext, word: string, pubkey: string, watching: boolean): Promise<void> {
  await ctx.scripts.run(
    'watchAlertWord',
    [ctx.keys.alertWordIndexKey(word), ctx.keys.alertWordUsersKey(word)],
    [word, pubkey, watching ? 1 : 0],
  );
}

/** How long one replace may hold a user's lock; a crashed holder's lock frees itself after it. */
export const ALERT_WORDS_LOCK_TTL_MS = 10_000;
/** The first wait for a busy lock; each further wait doubles, up to {@link ALERT_WORDS_LOCK_MAX_WAIT_MS}. */
const ALERT_WORDS_LOCK_FIRST_WAIT_MS = 5;
const ALERT_WORDS_LOCK_MAX_WAIT_MS = 500;

/**
 * Step 1 of {@link replaceAlertWords} under the user's lock: the words held before, after waiting
 * out another replace (a short one, or a crashed one's lock expiry).
 */
async function widenUnderLock(ctx: RedisContext, pubkey: string, lockToken: string, words: readonly string[]): Promise<string[]> {
  const deadline = Date.now() + 2 * ALERT_WORDS_LOCK_TTL_MS;
  for (let wait = ALERT_WORDS_LOCK_FIRST_WAIT_MS; ; wait = Math.min(2 * wait, ALERT_WORDS_LOCK_MAX_WAIT_MS)) {
    const before = await ctx.scripts.run(
      'widenAlertWords',
      [ctx.keys.userAlertWordsKey(pubkey), ctx.keys.inboxKey(pubkey), ctx.keys.userAlertWordsLockKey(pubkey)],
      [lockToken, ALERT_WORDS_LOCK_TTL_MS, ...words],
    );
    if (Array.isArray(before) && before.every((word): word is string => typeof word === 'string')) return before;
    if (before !== null) throw new TypeError(`replaceAlertWords: widenAlertWords replied ${JSON.stringify(before)}, not a list of words`);
    if (Date.now() > deadline) throw new Error(`replaceAlertWords: the alert words of ${pubkey} stay locked by another replace`);
    await sleep(wait);
  }
}

/** Replace a user's alert words in the four steps of the module header. */
export async function replaceAlertWords(ctx: RedisContext, pubkey: string, words: readonly string[]): Promise<void> {
  const distinct = [...new Set(words)];
  if (distinct.length > ALERT_WORDS_CEILING)
    throw new RangeError(`replaceAlertWords: at most ${ALERT_WORDS_CEILING} words, got ${distinct.length}`);
  const lockToken = randomUUID();
  const userWordsKey = ctx.keys.userAlertWordsKey(pubkey);
  try {
    const before = await widenUnderLock(ctx, pubkey, lockToken, distinct);
    const kept = new Set(distinct);
    const dropped = before.filter((word) => !kept.has(word));
    // Every new word, not only the ones missing before: a retry after a crash finds them in the set already.
    await Promise.all([
      ...distinct.map((word) => watchAlertWord(ctx, word, pubkey, true)),
      ...dropped.map((word) => watchAlertWord(ctx, word, pubkey, false)),
    ]);
    if (dropped.length > 0) await ctx.redis.srem(userWordsKey, ...dropped);
  } finally {
    await ctx.scripts.run('releaseClaim', [ctx.keys.userAlertWordsLockKey(pubkey)], [lockToken]);
  }
}

export async function readAlertWords(ctx: RedisContext, pubkey: string): Promise<string[]> {
  return (await ctx.redis.smembers(ctx.keys.userAlertWordsKey(pubkey))).sort();
}

export async function alertWordWatchers(ctx: RedisContext, words: readonly string[]): Promise<Map<string, string[]>> {
  const watchers = new Map<string, string[]>();
  const distinct = [...new Set(words)];
  if (distinct.length === 0) return watchers;
  // One index lookup per index shard for all its words at once; watcher sets only for the words somebody watches.
  const byShard = new Map<string, string[]>();
  for (const word of distinct) {
    const key = ctx.keys.alertWordIndexKey(word);
    byShard.set(key, [...(byShard.get(key) ?? []), word]);
  }
  const lookups = await Promise.all(
    [...byShard].map(async ([key, shardWords]) => {
      const scores = await ctx.redis.zmscore(key, ...shardWords);
      return shardWords.filter((_, i) => scores[i] !== null);
    }),
  );
  const watched = lookups.flat();
  const sets = await Promise.all(watched.map((word) => ctx.redis.smembers(ctx.keys.alertWordUsersKey(word))));
  watched.forEach((word, i) => {
    const users = sets[i] ?? [];
    if (users.length > 0) watchers.set(word, users.sort());
  });
  return watchers;
}

export async function alertWordCount(ctx: RedisContext): Promise<number> {
  const counts = await Promise.all(ctx.keys.alertWordIndexKeys.map((key) => ctx.redis.zcard(key)));
  return counts.reduce((sum, n) => sum + n, 0);
}

export async function publishAnnouncement(ctx: RedisContext, text: string, expiresAtMs: number): Promise<Announcement> {
  const createdAtMs = ctx.clock.nowMs();
  const document = JSON.stringify({ text, createdAtMs, expiresAtMs });
  const id = Number(
    await ctx.scripts.run(
      'publishAnnouncement',
      [ctx.keys.announcementSeqKey, ctx.keys.announcementsKey, ctx.keys.activeAnnouncementsKey],
      [document, expiresAtMs],
    ),
  );
  return { id, text, createdAtMs, expiresAtMs };
}

export async function activeAnnouncements(ctx: RedisContext): Promise<Announcement[]> {
  const ids = (await activeIds(ctx)).map(Number);
  if (ids.length === 0) return [];
  const documents = await ctx.redis.hmget(ctx.keys.announcementsKey, ...ids.map(String));
  const announcements: Announcement[] = [];
  ids.forEach((id, i) => {
    const parsed = parseJson(documents[i] ?? '');
    if (
      !isRecord(parsed) ||
      typeof parsed.text !== 'string' ||
      typeof parsed.createdAtMs !== 'number' ||
      typeof parsed.expiresAtMs !== 'number'
    ) {
      ctx.logger.warn({ id }, 'announcement document is missing or not {text, createdAtMs, expiresAtMs}; skipped');
      return;
    }
    announcements.push({ id, text: parsed.text, createdAtMs: parsed.createdAtMs, expiresAtMs: parsed.expiresAtMs });
  });
  return announcements.sort((a, b) => b.id - a.id);
}

/** Parse a hint published by a script; null for anything else on the channel. */
export function parseInboxHint(payload: string): InboxHint | null {
  const parsed = parseJson(payload);
  if (!isRecord(parsed) || typeof parsed.pubkey !== 'string' || !isInboxType(parsed.type) || typeof parsed.totalNew !== 'number')
    return null;
  return { pubkey: parsed.pubkey, type: parsed.type, totalNew: parsed.totalNew };
}

/** Hint subscription: one subscriber connection per listener (hints are few; the API holds one). */
export async function subscribeInboxHints(ctx: RedisContext, listener: (hint: InboxHint) => void): Promise<() => Promise<void>> {
  const subscriber: Redis = ctx.redis.duplicate();
  subscriber.on('error', (error: Error) => ctx.logger.warn({ err: error.message }, 'inbox hint subscriber error'));
  subscriber.on('message', (_channel: string, payload: string) => {
    const hint = parseInboxHint(payload);
    if (hint) listener(hint);
  });
  await subscriber.subscribe(hintChannel(ctx));
  return async () => {
    try {
      await subscriber.quit();
    } catch {
      subscriber.disconnect();
    }
  };
}
