/**
 * The user's inbox on Redis (port-inbox.ts), in Twitarr's layout (keys.ts, "the user's inbox"):
 * one hash per user with a total and a `_viewed` field per type, the global `alertwords` index
 * with one watcher set per word, announcements in a hash with an expiry index, and live hints on
 * the `inbox:hints` channel, published by the scripts that change a counter.
 */
import type { Redis } from 'ioredis';
import {
  INBOX_TYPES,
  MAX_ALERT_WORDS_PER_USER,
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

function hintChannel(ctx: RedisContext): string {
  return inboxHintChannel(ctx.redis.options.keyPrefix ?? '');
}

export async function rememberInboxUser(ctx: RedisContext, pubkey: string): Promise<void> {
  await ctx.redis.hsetnx(ctx.keys.inboxKey(pubkey), 'known', '1');
}

export async function countInboxNotifications(
  ctx: RedisContext,
  entries: readonly InboxCountEntry[],
  ttlSecs: number,
): Promise<(number | null)[]> {
  if (entries.length === 0) return [];
  const ttl = expirySeconds('countInboxNotifications', ttlSecs);
  const key = prefixed(ctx);
  const args: (string | number)[] = [ttl, ctx.clock.nowMs(), hintChannel(ctx)];
  for (const entry of entries) {
    args.push(
      key(ctx.keys.inboxCountedKey(entry.countKey, entry.recipient)),
      key(ctx.keys.inboxKey(entry.recipient)),
      key(ctx.keys.userTokensKey(entry.recipient)),
      entry.type,
      entry.recipient,
    );
  }
  const reply = (await ctx.scripts.run('countInbox', [ctx.keys.activeAnnouncementsKey], args)) as (number | null)[];
  return reply.map((value) => (typeof value === 'number' ? value : null));
}

/** Active announcement ids, as Redis returns them. */
async function activeIds(ctx: RedisContext): Promise<number[]> {
  const ids = await ctx.redis.zrangebyscore(ctx.keys.activeAnnouncementsKey, `(${ctx.clock.nowMs()}`, '+inf');
  return ids.map(Number);
}

export async function readInboxCounts(ctx: RedisContext, pubkey: string): Promise<InboxCounts> {
  const [hash, ids] = await Promise.all([ctx.redis.hgetall(ctx.keys.inboxKey(pubkey)), activeIds(ctx)]);
  const number = (field: string): number => {
    const value = Number(hash[field] ?? 0);
    return Number.isFinite(value) ? value : 0;
  };
  const highWater = number('announcement');
  const fresh = ids.filter((id) => id > highWater).length;
  return inboxCountsFrom((type) => ({ total: number(type), viewed: number(`${type}_viewed`) }), fresh, ids.length);
}

export async function readInboxBadges(ctx: RedisContext, pubkeys: readonly string[]): Promise<number[]> {
  if (pubkeys.length === 0) return [];
  const key = prefixed(ctx);
  const reply = (await ctx.scripts.run(
    'readInboxBadges',
    [ctx.keys.activeAnnouncementsKey],
    [ctx.clock.nowMs(), ...pubkeys.map((pubkey) => key(ctx.keys.inboxKey(pubkey)))],
  )) as number[];
  return reply.map(Number);
}

export async function markInboxViewed(ctx: RedisContext, pubkey: string, types: readonly InboxType[]): Promise<InboxCounts> {
  const distinct = INBOX_TYPES.filter((type) => types.includes(type));
  await ctx.scripts.run(
    'markInboxViewed',
    [ctx.keys.inboxKey(pubkey), ctx.keys.activeAnnouncementsKey],
    [ctx.clock.nowMs(), hintChannel(ctx), pubkey, ...distinct],
  );
  return readInboxCounts(ctx, pubkey);
}

export async function replaceAlertWords(ctx: RedisContext, pubkey: string, words: readonly string[]): Promise<void> {
  const distinct = [...new Set(words)];
  if (distinct.length > MAX_ALERT_WORDS_PER_USER)
    throw new RangeError(`replaceAlertWords: at most ${MAX_ALERT_WORDS_PER_USER} words, got ${distinct.length}`);
  await ctx.scripts.run(
    'replaceAlertWords',
    [ctx.keys.alertWordsKey, ctx.keys.userAlertWordsKey(pubkey), ctx.keys.inboxKey(pubkey)],
    [prefixed(ctx)(ctx.keys.ALERT_WORD_USERS_KEY_PREFIX), pubkey, ...distinct],
  );
}

export async function readAlertWords(ctx: RedisContext, pubkey: string): Promise<string[]> {
  return (await ctx.redis.smembers(ctx.keys.userAlertWordsKey(pubkey))).sort();
}

export async function alertWordWatchers(ctx: RedisContext, words: readonly string[]): Promise<Map<string, string[]>> {
  const watchers = new Map<string, string[]>();
  const distinct = [...new Set(words)];
  if (distinct.length === 0) return watchers;
  // One index lookup for every word at once; watcher sets only for the words somebody watches.
  const scores = await ctx.redis.zmscore(ctx.keys.alertWordsKey, ...distinct);
  const watched = distinct.filter((_, i) => scores[i] !== null);
  const sets = await Promise.all(watched.map((word) => ctx.redis.smembers(ctx.keys.alertWordUsersKey(word))));
  watched.forEach((word, i) => {
    const users = sets[i] ?? [];
    if (users.length > 0) watchers.set(word, users.sort());
  });
  return watchers;
}

export async function alertWordCount(ctx: RedisContext): Promise<number> {
  return ctx.redis.zcard(ctx.keys.alertWordsKey);
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
  const ids = await activeIds(ctx);
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
