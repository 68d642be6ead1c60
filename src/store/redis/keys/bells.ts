/**
 * Key names of notify lists, watchers, fan-out jobs, and quiet-hours digests: one section of `createRedisKeys` (`../keys.ts`), the only place keys are
 * built. The tables give each name in the divine and the cluster layout.
 */
import { shardIndexes, shardOf, type KeyTags } from './tags.ts';

// ---- notify lists and fan-out jobs (port-bells.ts) ------------------------------------------

/*
 * Bells (seed 000's key table; divine's names, types and value formats). `{S}` is a fan-out job
 * shard, {@link FANOUT_CLUSTER_SHARDS} of them: the shard of a job's video (its `event_json`).
 *
 * | divine name                          | cluster name                          | type   | value |
 * |--------------------------------------|---------------------------------------|--------|-------|
 * | `notify_subs:{subscriber}`           | `notify_subs:{u:SUBSCRIBER}`          | SET    | creators the subscriber bells (forward index); no TTL |
 * | `notify_subs_ts:{subscriber}`        | `notify_subs_ts:{u:SUBSCRIBER}`       | STRING | `created_at:event_id` of the applied list (a bare integer from an earlier build is a timestamp with no id); no TTL |
 * | `notify_subs_lease:{subscriber}`     | `notify_subs_lease:{u:SUBSCRIBER}`    | STRING | `created_at:event_id` of the list being applied, PX the lease (nostr-push's own, see `bells.ts`) |
 * | `notify_watchers:{creator}`          | `notify_watchers:{u:CREATOR}`         | SET    | subscribers watching the creator (reverse index, walked by SSCAN); no TTL |
 * | `notify_rate:{subscriber}:{creator}` | `notify_rate:SUBSCRIBER:{u:CREATOR}`  | STRING | "1", bell rate window, `SET EX new_post_rate_limit_secs`; full hex, never truncated |
 * | `fanout:enqueued:{eventId}`          | `fanout:enqueued:{f:S}:EVENTID`       | STRING | "1", the video's fan-out was queued, `EX processed_event_ttl_secs` |
 * | `new_post_fanout_jobs`               | `new_post_fanout_jobs:{f:S}`          | ZSET   | job JSON (`fanout-job-codec.ts`) → next availability or lease deadline, ms |
 *
 * The rate window sits in the creator's slot: one bell page (one creator) opens its windows there.
 * A job, its successors and retries, and its enqueue marker share the shard of the video, so each
 * transition of the queue is one script in one slot.
 */
/** Fan-out job shards in the cluster layout (one in divine). */
export const FANOUT_CLUSTER_SHARDS = 8;
export function bellKeys(t: KeyTags) {
  const cluster = t.layout === 'cluster';
  const shards = cluster ? FANOUT_CLUSTER_SHARDS : 1;
  const jobsKey = (shard: number): string => (cluster ? `new_post_fanout_jobs:{f:${shard}}` : 'new_post_fanout_jobs');
  return {
    notifySubsKey: (subscriber: string): string => `notify_subs:${t.user(subscriber)}`,
    notifySubsTsKey: (subscriber: string): string => `notify_subs_ts:${t.user(subscriber)}`,
    notifySubsLeaseKey: (subscriber: string): string => `notify_subs_lease:${t.user(subscriber)}`,
    notifyWatchersKey: (creator: string): string => `notify_watchers:${t.user(creator)}`,
    notifyRateKey: (subscriber: string, creator: string): string => `notify_rate:${subscriber}:${t.user(creator)}`,
    fanoutShards: shards,
    /** The shard of a fan-out job: the shard of its video's JSON, so a video's jobs stay together. */
    fanoutShardOf: (eventJson: string): number => shardOf(eventJson, shards),
    fanoutEnqueuedKey: (shard: number, eventId: string): string =>
      cluster ? `fanout:enqueued:{f:${shard}}:${eventId}` : `fanout:enqueued:${eventId}`,
    newPostFanoutJobsKey: jobsKey,
    /** Every shard of the job queue (one key in divine: `new_post_fanout_jobs`). */
    newPostFanoutJobsKeys: shardIndexes(shards).map(jobsKey),
  };
}
/*
 * Quiet hours (port-quiet-hours.ts). `{S}` is a digest shard, {@link DIGEST_CLUSTER_SHARDS} of
 * them: the shard of the pubkey. A user's held counts sit in the slot of their shard's schedule,
 * so hold, claim and complete each change both in one script.
 *
 * | divine name             | cluster name                 | type   | value                                          |
 * |-------------------------|------------------------------|--------|------------------------------------------------|
 * | `quiet_hours:{pubkey}`  | `quiet_hours:{u:PUBKEY}`     | STRING | JSON `{startMinute, endMinute, urgentTypes}` (kind 3083) |
 * | `digest:{pubkey}`       | `digest:{d:S}:PUBKEY`        | HASH   | notification type → pushes held for the digest  |
 * | `digests:due`           | `digests:due:{d:S}`          | ZSET   | pubkey → when its digest is due (window end, lease deadline), ms |
 */
/** Digest schedule shards in the cluster layout (one in divine). */
export const DIGEST_CLUSTER_SHARDS = 8;
export function quietHoursKeys(t: KeyTags) {
  const cluster = t.layout === 'cluster';
  const shards = cluster ? DIGEST_CLUSTER_SHARDS : 1;
  const dueKey = (shard: number): string => (cluster ? `digests:due:{d:${shard}}` : 'digests:due');
  return {
    quietHoursKey: (pubkey: string): string => `quiet_hours:${t.user(pubkey)}`,
    digestKey: (pubkey: string): string => (cluster ? `digest:{d:${shardOf(pubkey, shards)}}:${pubkey}` : `digest:${pubkey}`),
    /** The schedule shard holding `pubkey`'s digest (`digests:due` in divine). */
    digestsDueKeyOf: (pubkey: string): string => dueKey(shardOf(pubkey, shards)),
    /** Every shard of the digest schedule, in order. */
    digestsDueKeys: shardIndexes(shards).map(dueKey),
  };
}
