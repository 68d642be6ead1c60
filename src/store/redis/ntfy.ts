/**
 * ntfy topics on Redis (port-ntfy.ts).
 *
 * Layout (keys in `keys.ts`; the divine layout's names here):
 *
 * | key                  | type   | content                                                       |
 * |----------------------|--------|---------------------------------------------------------------|
 * | `ntfy:head`          | STRING | `ms-seq` of the newest id allocated                           |
 * | `ntfy:topic:{topic}` | STREAM | entry id `ms-seq` → `m` content JSON, `x` expiry (ms)          |
 * | `ntfy:expiry`        | ZSET   | topic → expiry (ms) of its oldest entry, the janitor's index  |
 * | `ntfy:ids`           | HASH   | entry id `ms-seq` → topic, for `since=<id>` of any topic      |
 * | channel `ntfy:wake`  | pub/sub| the append event (format in `keys.ts`), published by the append |
 *
 * This module describes the single-server path (the divine layout). In the cluster layout the
 * topics are spread over slots and the indexes sharded, so appending, reading and expiring run as
 * per-slot steps instead of the scripts below (`ntfy-cluster.ts`, which says why they keep the
 * same guarantees); the rest (ids, events, listeners, lookups) is shared.
 *
 * A message id `(ms, seq)` is the stream entry id `ms-seq`; the 12-character ntfy id is the same
 * position in base 62 (`ntfy-ids.ts`), converted here in both directions. Appending is one Lua
 * script (`appendNtfyMessage-4`) that allocates the position from the head and the store clock,
 * adds the entry, moves the head, indexes the topic's expiry and its id, and publishes the
 * append event with the message and the previous head. A read takes the head and the topics'
 * ranges in one atomic step (`readNtfyTopics-1`), so the head and the entries are one snapshot:
 * that is what lets a complete read move an idle cursor up to the head without skipping
 * anything. One script call answers many reads at once (`readNtfyMessagesMany`).
 *
 * Expiry: `expireNtfyTopic-3` trims one topic from its oldest entry and re-indexes it; the
 * janitor calls it for every topic whose indexed expiry is due. Readers skip expired entries by
 * their `x` field in the meantime.
 *
 * Append events reach listeners only over pub/sub, this process's own appends included: the
 * script publishes in commit order and one subscriber connection receives in that order, so
 * listeners hear every process's appends in id order. (Emitting our own appends when their reply
 * arrives would interleave them out of order with other processes' events.) The channel carries
 * the client's key prefix by hand (ioredis prefixes keys, not channels), so stores with different
 * test prefixes never hear each other.
 */
import type { Redis } from 'ioredis';
import type { NtfyAppendEvent, NtfyMessage, NtfyMessageContent, NtfyReadRequest, NtfyReadResult } from '../port-ntfy.ts';
import { decodeNtfyId, encodeNtfyId, NTFY_MAX_SEQ, type NtfyPosition } from '../ntfy-ids.ts';
import {
  decodeNtfyContent,
  NtfyAppendListeners,
  requireLimit,
  requireNtfyReadRequest,
  requirePositiveTtl,
  storedNtfyContent,
  type StoredNtfyContent,
} from '../ntfy-shared.ts';
import { prefixed, type RedisContext } from './context.ts';
import { ntfyWakeChannel } from './keys.ts';
import {
  announceInCluster,
  appendInCluster,
  expireInCluster,
  NTFY_EXPIRY_TOPICS_PER_CALL,
  readRangesInCluster,
  readWatermark,
  type TopicRange,
} from './ntfy-cluster.ts';

type StreamEntry = [string, string[]];

/** A read of {@link RedisNtfyTopics.readMany}: its distinct topics and the reply range of each. */
interface ReadPlan {
  request: NtfyReadRequest;
  topics: string[];
  ranges: number[];
}

function entryIdOf(position: NtfyPosition): string {
  return `${position.ms}-${position.seq}`;
}

function positionOfEntryId(entryId: string): NtfyPosition | null {
  const dash = entryId.indexOf('-');
  if (dash <= 0) return null;
  const ms = Number(entryId.slice(0, dash));
  const seq = Number(entryId.slice(dash + 1));
  return Number.isSafeInteger(ms) && Number.isSafeInteger(seq) ? { ms, seq } : null;
}

/** The stream entry id of an ntfy id; null for a malformed id. */
function entryIdOfNtfyId(id: string): string | null {
  const position = decodeNtfyId(id);
  return position ? entryIdOf(position) : null;
}

/** The first stream entry id after an ntfy id (XRANGE is inclusive). */
function entryIdAfter(id: string | null): string {
  if (id === null) return '-';
  const position = decodeNtfyId(id);
  if (!position) throw new RangeError(`not an ntfy message id: ${id}`);
  return position.seq < NTFY_MAX_SEQ ? `${position.ms}-${position.seq + 1}` : `${position.ms + 1}-0`;
}

/** Leading field of an append event in the format this version publishes (see `keys.ts`). */
const EVENT_FORMAT = '1';
/** Fields of an append event before the topic: format, previous, entry id, expiry, topic length. */
const EVENT_HEADER_FIELDS = 5;

/**
 * An append event from the channel, or null for a payload of another format or a damaged one
 * (the listener then sees a broken chain, which is safe).
 */
export function parseAppendEvent(payload: string): NtfyAppendEvent | null {
  const fields: string[] = [];
  let from = 0;
  for (let i = 0; i < EVENT_HEADER_FIELDS; i++) {
    const space = payload.indexOf(' ', from);
    if (space < 0) return null;
    fields.push(payload.slice(from, space));
    from = space + 1;
  }
  const [format, previous, entryId, expiry, topicLength] = fields as [string, string, string, string, string];
  const length = Number(topicLength);
  if (format !== EVENT_FORMAT || !Number.isSafeInteger(length) || length <= 0 || from + length > payload.length) return null;
  const position = positionOfEntryId(entryId);
  const previousPosition = previous === '-' ? null : positionOfEntryId(previous);
  const expiresMs = Number(expiry);
  const content = decodeNtfyContent(payload.slice(from + length));
  if (!position || (previous !== '-' && !previousPosition) || !Number.isSafeInteger(expiresMs) || !content) return null;
  const message: NtfyMessage = {
    id: encodeNtfyId(position),
    topic: payload.slice(from, from + length),
    timeMs: position.ms,
    expiresMs,
    ...content,
  };
  return { message, previousId: previousPosition ? encodeNtfyId(previousPosition) : null };
}

/** The ntfy part of one Redis store: the operations, the local listeners and the append-event subscriber. */
export class RedisNtfyTopics {
  private readonly channel: string;
  private corked = false;
  readonly listeners: NtfyAppendListeners;
  private subscriber: Redis | null = null;
  private subscribed: Promise<void> = Promise.resolve();
  /** The cluster layout's per-slot steps (`ntfy-cluster.ts`) instead of the single-server scripts. */
  private readonly inSlots: boolean;

  constructor(private readonly ctx: RedisContext) {
    this.listeners = new NtfyAppendListeners(ctx.logger);
    this.channel = ntfyWakeChannel(ctx.redis.options.keyPrefix ?? '');
    this.inSlots = ctx.keys.layout === 'cluster';
  }

  /**
   * Hold this connection's writes until the end of the event-loop turn, so the commands of every
   * ntfy operation started in the turn (a burst of publishes, a thousand subscriptions catching
   * up) leave in one socket write instead of one each: under load the write was the largest share
   * of an operation's CPU. Each command is still its own atomic step, sent in call order. Not
   * connected: ioredis queues commands itself and writes them on connect. A cluster client has a
   * connection per node and batches per node itself (auto-pipelining), so there is nothing to cork.
   */
  private corkForTurn(): void {
    if (this.corked || this.ctx.cluster || this.ctx.redis.status !== 'ready') return;
    const socket = this.ctx.redis.stream;
    socket.cork();
    this.corked = true;
    setImmediate(() => {
      this.corked = false;
      socket.uncork();
    });
  }

  /** Append by the script (see the module comment). */
  async append(topic: string, content: NtfyMessageContent, ttlMs: number): Promise<NtfyMessage> {
    requirePositiveTtl(ttlMs);
    // The stored form, so the answer is exactly what every reader will see.
    const stored = storedNtfyContent(content);
    if (this.inSlots) {
      const appended = await appendInCluster(this.ctx, this.channel, topic, stored.json, Math.ceil(ttlMs));
      if (!appended) throw new Error('appendNtfyMessage: the commit wrote nothing');
      const { ms, seq, expiresMs } = appended;
      return { id: encodeNtfyId({ ms, seq }), topic, timeMs: ms, expiresMs, ...stored.content };
    }
    return this.appendOnOneServer(topic, stored, Math.ceil(ttlMs), true);
  }

  /** ntfy's `Cache: no`: an id in the global order and an append event, nothing stored (port-ntfy.ts). */
  async announce(topic: string, content: NtfyMessageContent): Promise<NtfyMessage> {
    const stored = storedNtfyContent(content);
    if (this.inSlots) {
      const { ms, seq } = await announceInCluster(this.ctx, this.channel, topic, stored.json);
      return { id: encodeNtfyId({ ms, seq }), topic, timeMs: ms, expiresMs: 0, ...stored.content };
    }
    return this.appendOnOneServer(topic, stored, 0, false);
  }

  /** The divine layout's append script: one expiry index and one id index (their only shards). */
  private async appendOnOneServer(topic: string, stored: StoredNtfyContent, ttlMs: number, store: boolean): Promise<NtfyMessage> {
    this.corkForTurn();
    const { keys } = this.ctx;
    const reply = await this.ctx.scripts.run(
      'appendNtfyMessage',
      [keys.ntfyHeadKey, keys.ntfyTopicKey(topic), keys.ntfyExpiryKeys[0] as string, keys.ntfyIdsKeys[0] as string],
      [this.ctx.clock.nowMs(), ttlMs, stored.json, topic, NTFY_MAX_SEQ, this.channel, store ? '1' : '0'],
    );
    if (!Array.isArray(reply)) throw new Error('appendNtfyMessage: unexpected reply');
    const [ms, seq, expiresMs] = reply.map(Number) as [number, number, number];
    return { id: encodeNtfyId({ ms, seq }), topic, timeMs: ms, expiresMs, ...stored.content };
  }

  async read(topics: readonly string[], afterId: string | null, limit: number): Promise<NtfyReadResult> {
    return (await this.readMany([{ topics, afterId, limit }]))[0] as NtfyReadResult;
  }

  /** Every read in one step: the head and each distinct range once. */
  async readMany(requests: readonly NtfyReadRequest[]): Promise<NtfyReadResult[]> {
    for (const request of requests) requireNtfyReadRequest(request);
    const ranges: TopicRange[] = [];
    /** Range index by `start limit topic` (neither start nor limit holds a space). */
    const rangeIndex = new Map<string, number>();
    const plans = requests.map((request): ReadPlan => {
      const topics = [...new Set(request.topics)];
      const start = entryIdAfter(request.afterId);
      const indexes = topics.map((topic) => {
        const id = `${start} ${request.limit} ${topic}`;
        let index = rangeIndex.get(id);
        if (index === undefined) {
          index = rangeIndex.size;
          rangeIndex.set(id, index);
          ranges.push({ topic, start, count: request.limit });
        }
        return index;
      });
      return { request, topics, ranges: indexes };
    });
    if (ranges.length === 0) return plans.map(({ request }) => ({ messages: [], position: request.afterId, complete: true }));
    const { head: headEntry, replies } = this.inSlots
      ? await readRangesInCluster(this.ctx, this.channel, ranges)
      : await this.readRangesOnOneServer(ranges);
    const headPosition = headEntry === null ? null : positionOfEntryId(headEntry);
    const head = headPosition ? encodeNtfyId(headPosition) : null;
    const nowMs = this.ctx.clock.nowMs();
    return plans.map((plan) => this.resultOf(plan, replies, head, nowMs));
  }

  /** The head and every range by one `readNtfyTopics` script: one snapshot. */
  private async readRangesOnOneServer(ranges: readonly TopicRange[]): Promise<{ head: string | null; replies: unknown[] }> {
    const key = prefixed(this.ctx);
    const args: string[] = [];
    for (const range of ranges) args.push(key(this.ctx.keys.ntfyTopicKey(range.topic)), range.start, String(range.count));
    this.corkForTurn();
    const [head, ...replies] = (await this.ctx.scripts.run('readNtfyTopics', [this.ctx.keys.ntfyHeadKey], args)) as [unknown, ...unknown[]];
    return { head: typeof head === 'string' ? head : null, replies };
  }

  /** One read's answer from the ranges of the script's reply. */
  private resultOf(plan: ReadPlan, replies: readonly unknown[], head: string | null, nowMs: number): NtfyReadResult {
    const { request, topics, ranges } = plan;
    const { afterId, limit } = request;
    if (topics.length === 0) return { messages: [], position: afterId, complete: true };
    // Each range holds its topic's first `limit` entries after the cursor, so the first `limit`
    // of the merged, sorted entries are exactly the first `limit` of all of them.
    const merged: { position: NtfyPosition; topic: string; fields: string[] }[] = [];
    topics.forEach((topic, i) => {
      for (const [entryId, fields] of (replies[ranges[i] as number] as StreamEntry[] | null) ?? []) {
        const position = positionOfEntryId(entryId);
        if (position) merged.push({ position, topic, fields });
      }
    });
    if (topics.length > 1) merged.sort((a, b) => a.position.ms - b.position.ms || a.position.seq - b.position.seq);
    const complete = merged.length < limit;
    const taken = complete ? merged : merged.slice(0, limit);
    const messages: NtfyMessage[] = [];
    for (const entry of taken) {
      const message = this.toMessage(entry.topic, entry.position, entry.fields);
      if (message && message.expiresMs > nowMs) messages.push(message);
    }
    const last = taken[taken.length - 1];
    let position: string | null;
    if (!complete && last) position = encodeNtfyId(last.position);
    else position = head !== null && (afterId === null || head > afterId) ? head : afterId;
    return { messages, position, complete };
  }

  async latest(topics: readonly string[], upToId: string): Promise<NtfyMessage[]> {
    const unique = [...new Set(topics)];
    const end = entryIdOfNtfyId(upToId);
    if (unique.length === 0 || end === null) return [];
    this.corkForTurn();
    // One command per topic (each its own slot in a cluster), issued at once.
    const ranges = await Promise.all(
      unique.map((topic) => this.ctx.redis.xrevrange(this.ctx.keys.ntfyTopicKey(topic), end, '-', 'COUNT', 1)),
    );
    const nowMs = this.ctx.clock.nowMs();
    const messages: NtfyMessage[] = [];
    unique.forEach((topic, i) => {
      const [entry] = (ranges[i] as StreamEntry[] | null) ?? [];
      const position = entry ? positionOfEntryId(entry[0]) : null;
      const message = entry && position ? this.toMessage(topic, position, entry[1]) : null;
      if (message && message.expiresMs > nowMs) messages.push(message);
    });
    return messages.sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /** The newest id; in the cluster layout the newest with nothing pending at or below it (a safe cursor). */
  async head(): Promise<string | null> {
    this.corkForTurn();
    const head = this.inSlots ? await readWatermark(this.ctx, this.channel) : await this.ctx.redis.get(this.ctx.keys.ntfyHeadKey);
    const position = head === null ? null : positionOfEntryId(head);
    return position ? encodeNtfyId(position) : null;
  }

  async has(id: string): Promise<boolean> {
    const position = decodeNtfyId(id);
    if (position === null) return false;
    const entryId = entryIdOf(position);
    this.corkForTurn();
    const topic = await this.ctx.redis.hget(this.ctx.keys.ntfyIdsKeyOf(entryId), entryId);
    if (topic === null) return false;
    // The index outlives expiry until the janitor runs; the entry's own expiry decides.
    this.corkForTurn();
    const [entry] = (await this.ctx.redis.xrange(this.ctx.keys.ntfyTopicKey(topic), entryId, entryId)) as StreamEntry[];
    const message = entry ? this.toMessage(topic, position, entry[1]) : null;
    return message !== null && message.expiresMs > this.ctx.clock.nowMs();
  }

  async expire(limit: number): Promise<number> {
    requireLimit('expireNtfyMessages', limit);
    if (this.inSlots) return expireInCluster(this.ctx, limit);
    const { keys } = this.ctx;
    const nowMs = this.ctx.clock.nowMs();
    const expiryKey = keys.ntfyExpiryKeys[0] as string;
    const due = await this.ctx.redis.zrangebyscore(expiryKey, '-inf', nowMs, 'LIMIT', 0, NTFY_EXPIRY_TOPICS_PER_CALL);
    let deleted = 0;
    for (const topic of due) {
      if (deleted >= limit) break;
      const [count] = (await this.ctx.scripts.run(
        'expireNtfyTopic',
        [keys.ntfyTopicKey(topic), expiryKey, keys.ntfyIdsKeys[0] as string],
        [nowMs, topic, limit - deleted],
      )) as [number, number];
      deleted += count;
    }
    return deleted;
  }

  /** Start hearing append events (once, on the first listener). */
  addListener(listener: (event: NtfyAppendEvent) => void): () => void {
    const remove = this.listeners.add(listener);
    if (!this.subscriber) this.startSubscriber();
    return remove;
  }

  /** Resolves once the append subscription is confirmed (or failed); at once while there is none. */
  listening(): Promise<void> {
    return this.subscribed;
  }

  private startSubscriber(): void {
    const subscriber = this.ctx.redis.duplicate();
    this.subscriber = subscriber;
    subscriber.on('error', (error: Error) => this.ctx.logger.warn({ err: error.message }, 'ntfy append-event subscriber error'));
    subscriber.on('message', (_channel: string, payload: string) => {
      const event = parseAppendEvent(payload);
      if (event) this.listeners.emit(event);
    });
    // ioredis re-subscribes by itself after a reconnect; events lost meanwhile are advisory.
    this.subscribed = subscriber.subscribe(this.channel).then(
      () => undefined,
      (error: unknown) => {
        this.ctx.logger.warn({ err: (error as Error).message }, 'ntfy append-event subscribe failed; relying on periodic re-reads');
      },
    );
  }

  async close(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (!subscriber) return;
    try {
      await subscriber.quit();
    } catch {
      subscriber.disconnect();
    }
  }

  private toMessage(topic: string, position: NtfyPosition, fields: string[]): NtfyMessage | null {
    let contentJson: string | undefined;
    let expiry: number | undefined;
    for (let i = 0; i + 1 < fields.length; i += 2) {
      if (fields[i] === 'm') contentJson = fields[i + 1];
      else if (fields[i] === 'x') expiry = Number(fields[i + 1]);
    }
    const content = contentJson === undefined ? null : decodeNtfyContent(contentJson);
    if (!content || expiry === undefined || !Number.isFinite(expiry)) {
      this.ctx.logger.warn({ topic, entry: entryIdOf(position) }, 'stored ntfy message is damaged; skipped');
      return null;
    }
    return { id: encodeNtfyId(position), topic, timeMs: position.ms, expiresMs: expiry, ...content };
  }
}
