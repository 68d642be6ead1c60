/**
 * Scheduled ntfy messages on Redis (port-ntfy.ts `NtfyScheduledStore`), both layouts. Keys in
 * `keys/ntfy.ts`:
 *
 * - `ntfy:sched:{topic}` (HASH, the topic's slot): scheduled id → `<deliver at ms> <ttl ms> <content JSON>`;
 * - `ntfy:due` (ZSET; sharded by topic in the cluster layout): `<scheduled id> <topic>` → due time.
 *
 * Scheduling writes both (divine: one script; cluster: the due index first, then the entry, so a
 * crash between leaves only an index member, which delivery drops; the publisher was not answered).
 *
 * Delivery is a claim, then a commit:
 * 1. `claimNtfyDue-1` takes a shard's due members and moves them to a lease deadline
 *    ({@link NTFY_SCHEDULED_LEASE_MS}), so other processes leave them alone while this one
 *    delivers; members of a process that died come due again at the deadline;
 * 2. the delivery appends the message and deletes its entry in one script in the topic's slot:
 *    divine `deliverNtfyScheduled-6` (the whole append, as `appendNtfyMessage-4`); cluster
 *    `commitNtfyScheduled-2` as the commit step of the cluster append (`ntfy-cluster.ts`: id from
 *    the sequencer first, event after). A second delivery of the same entry finds it gone and
 *    writes nothing, so a message is delivered once whatever the leases did;
 * 3. the due member is removed.
 */
import type { NtfyMessage, NtfyMessageContent, NtfyScheduledMessage } from '../port-ntfy.ts';
import { encodeNtfyId, NTFY_MAX_SEQ } from '../ntfy-ids.ts';
import { decodeNtfyContent, newScheduledId, requireLimit, requirePositiveTtl, storedNtfyContent } from '../ntfy-shared.ts';
import type { RedisContext } from './context.ts';
import { appendInCluster, type ClusterCommit } from './ntfy-cluster.ts';

/** How long a claimed due message is left to its claimant before another process may deliver it. */
export const NTFY_SCHEDULED_LEASE_MS = 30_000;

const ENTRY_PATTERN = /^(\d+) (\d+) ([\s\S]*)$/;
/** Length of a scheduled id, the first part of a due member. */
const ID_LENGTH = 12;

interface Entry {
  deliverAtMs: number;
  ttlMs: number;
  contentJson: string;
}

function parseEntry(value: string): Entry | null {
  const match = ENTRY_PATTERN.exec(value);
  if (!match?.[1] || !match[2] || match[3] === undefined) return null;
  return { deliverAtMs: Number(match[1]), ttlMs: Number(match[2]), contentJson: match[3] };
}

export class RedisNtfySchedule {
  private readonly inSlots: boolean;

  constructor(
    private readonly ctx: RedisContext,
    private readonly channel: string,
  ) {
    this.inSlots = ctx.keys.layout === 'cluster';
  }

  async schedule(topic: string, content: NtfyMessageContent, deliverAtMs: number, ttlMs: number): Promise<NtfyScheduledMessage> {
    requirePositiveTtl(ttlMs);
    const id = newScheduledId();
    const stored = storedNtfyContent({ ...content, sequenceId: id });
    const at = Math.floor(deliverAtMs);
    const ttl = Math.ceil(ttlMs);
    const { keys } = this.ctx;
    const entry = `${at} ${ttl} ${stored.json}`;
    const member = `${id} ${topic}`;
    if (this.inSlots) {
      await this.ctx.redis.zadd(keys.ntfyDueKeyOf(topic), at, member);
      await this.ctx.redis.hset(keys.ntfySchedKey(topic), id, entry);
      await this.ctx.replication.afterWrites(() => [keys.ntfyDueKeyOf(topic), keys.ntfySchedKey(topic)]);
    } else {
      await this.ctx.scripts.run('scheduleNtfyMessage', [keys.ntfySchedKey(topic), keys.ntfyDueKeyOf(topic)], [id, entry, member, at]);
    }
    return { ...stored.content, id, topic, deliverAtMs: at, ttlMs: ttl, sequenceId: id };
  }

  async read(topics: readonly string[], limit: number): Promise<NtfyScheduledMessage[]> {
    requireLimit('readNtfyScheduled', limit);
    const unique = [...new Set(topics)];
    const hashes = await Promise.all(unique.map((topic) => this.ctx.redis.hgetall(this.ctx.keys.ntfySchedKey(topic))));
    const scheduled: NtfyScheduledMessage[] = [];
    unique.forEach((topic, i) => {
      for (const [id, value] of Object.entries(hashes[i] ?? {})) {
        const entry = parseEntry(value);
        const content = entry ? decodeNtfyContent(entry.contentJson) : null;
        if (!entry || !content) {
          this.ctx.logger.warn({ topic, id }, 'scheduled ntfy message is damaged; skipped');
          continue;
        }
        scheduled.push({ ...content, id, topic, deliverAtMs: entry.deliverAtMs, ttlMs: entry.ttlMs, sequenceId: id });
      }
    });
    scheduled.sort((a, b) => a.deliverAtMs - b.deliverAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return scheduled.slice(0, limit);
  }

  /** Claim due members shard by shard and deliver each (see the module comment). */
  async release(limit: number): Promise<NtfyMessage[]> {
    requireLimit('releaseDueNtfyMessages', limit);
    const delivered: NtfyMessage[] = [];
    for (const dueKey of this.ctx.keys.ntfyDueKeys) {
      if (delivered.length >= limit) break;
      const nowMs = this.ctx.clock.nowMs();
      const members = (await this.ctx.scripts.run(
        'claimNtfyDue',
        [dueKey],
        [nowMs, nowMs + NTFY_SCHEDULED_LEASE_MS, limit - delivered.length],
      )) as string[];
      for (const member of members) {
        const message = await this.deliver(dueKey, member);
        if (message) delivered.push(message);
      }
    }
    return delivered;
  }

  private async deliver(dueKey: string, member: string): Promise<NtfyMessage | null> {
    const id = member.slice(0, ID_LENGTH);
    const topic = member.slice(ID_LENGTH + 1);
    const { keys } = this.ctx;
    if (!this.inSlots) {
      const reply = (await this.ctx.scripts.run(
        'deliverNtfyScheduled',
        [
          keys.ntfyHeadKey,
          keys.ntfyTopicKey(topic),
          keys.ntfyExpiryKeys[0] as string,
          keys.ntfyIdsKeys[0] as string,
          keys.ntfySchedKey(topic),
          dueKey,
        ],
        [this.ctx.clock.nowMs(), id, topic, NTFY_MAX_SEQ, this.channel, member],
      )) as [number, number, number, string] | null;
      return reply ? this.message(topic, reply[0], reply[1], reply[2], reply[3]) : null;
    }
    const value = await this.ctx.redis.hget(keys.ntfySchedKey(topic), id);
    const entry = value === null ? null : parseEntry(value);
    let delivered: NtfyMessage | null = null;
    if (entry) {
      const commit: ClusterCommit = async (entryId, expiresMs) =>
        (await this.ctx.scripts.run(
          'commitNtfyScheduled',
          [keys.ntfyTopicKey(topic), keys.ntfySchedKey(topic)],
          [id, entryId, expiresMs],
        )) === 1;
      const appended = await appendInCluster(this.ctx, this.channel, topic, entry.contentJson, entry.ttlMs, commit);
      if (appended) delivered = this.message(topic, appended.ms, appended.seq, appended.expiresMs, entry.contentJson);
    }
    await this.ctx.redis.zrem(dueKey, member);
    return delivered;
  }

  private message(topic: string, ms: number, seq: number, expiresMs: number, contentJson: string): NtfyMessage | null {
    const content = decodeNtfyContent(contentJson);
    if (!content) {
      this.ctx.logger.warn({ topic }, 'delivered scheduled ntfy message is damaged; its readers skip it');
      return null;
    }
    return { id: encodeNtfyId({ ms, seq }), topic, timeMs: ms, expiresMs, ...content };
  }
}
