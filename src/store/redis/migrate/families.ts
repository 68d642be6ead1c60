/**
 * The key families of `store migrate-layout --from divine --to cluster`: for every key a store in
 * the divine layout holds (the tables in `keys.ts`), where it goes in the cluster layout.
 *
 * A family names its source keys by a SCAN pattern and a parser; each source key it recognises
 * gets a {@link Placement}:
 * - `whole`: the key under its new name (a per-user key gains the user's tag, `user_tokens:PK` →
 *   `user_tokens:{u:PK}`; a key that keeps its name in both layouts is copied as it is);
 * - `each`: the key under every one of several names (a fan-out marker whose shard cannot be
 *   told from its name goes to every shard: a marker only ever stops a second enqueue);
 * - `hash` / `zset` / `set`: one key split member by member into shards (`token_to_pubkey` into its 64
 *   token shards, a queue's sets into the queue's shards, `alertwords` into the index shards …);
 * - `skip`: a transient lock or lease a stopped fleet no longer holds (they expire by themselves;
 *   the next writer takes a fresh one), recognised so the leftover check does not report it.
 *
 * Every target name is built by the cluster layout's own builders (`createRedisKeys('cluster')`),
 * and every source prefix by the divine layout's, so this table cannot drift from `keys.ts`. A key
 * no family recognises is reported by {@link unclassifiedKeys} and fails the command: a layout
 * change that adds a key must add its family here.
 */
import { decodeFanoutJob } from '../../fanout-job-codec.ts';
import type { Lane, QueueName } from '../../port.ts';
import { createRedisKeys, type RedisKeys } from '../keys.ts';
import { MIGRATE_PROGRESS_KEY } from './engine.ts';
import type { FamilySpec } from './placement.ts';

export type { FamilySpec, Placement } from './placement.ts';
export { familyOf, placementOf, unclassifiedKeys } from './placement.ts';

const divine = createRedisKeys('divine');
/** A divine builder's fixed part: the name it builds for an empty owner (`user_tokens:`). */
const prefixOf = (build: (owner: string) => string): string => build('');
const HEX64 = /^[0-9a-f]{64}$/;
const QUEUE_NAMES: readonly QueueName[] = ['inbound', 'outbound', 'nip9a'];
const LANES: readonly Lane[] = ['critical', 'normal', 'low'];

/** A family of keys named `{prefix}{owner}` that keeps its owner and gains the owner's tag. */
function perOwner(name: string, build: (owner: string) => string, target: (owner: string) => string): FamilySpec {
  const prefix = prefixOf(build);
  return {
    name,
    match: `${prefix}*`,
    place: (key) => {
      const owner = key.slice(prefix.length);
      return key.startsWith(prefix) && owner !== '' && !owner.includes(':') ? { copy: 'whole', to: target(owner) } : null;
    },
  };
}

/** A family of keys whose two variable parts `pattern` captures, renamed by the cluster builder `target`. */
function twoParts(name: string, match: string, pattern: RegExp, target: (first: string, second: string) => string): FamilySpec {
  return {
    name,
    match,
    place: (key) => {
      const parts = pattern.exec(key);
      return parts ? { copy: 'whole', to: target(parts[1] as string, parts[2] as string) } : null;
    },
  };
}

/** A family of one key, copied under `to` (its name in the cluster layout). */
function single(name: string, from: string, to: string): FamilySpec {
  return { name, match: from, place: (key) => (key === from ? { copy: 'whole', to } : null) };
}

/** Keys (of a pattern) that have the same name in both layouts: each is touched alone. */
function sameName(name: string, match: string, accepts: (key: string) => boolean = () => true): FamilySpec {
  return { name, match, place: (key) => (accepts(key) ? { copy: 'whole', to: key } : null) };
}

/** The last `:`-separated part and what is before it (a recipient at the end of a name). */
function splitLast(rest: string): [string, string] | null {
  const at = rest.lastIndexOf(':');
  return at <= 0 || at === rest.length - 1 ? null : [rest.slice(0, at), rest.slice(at + 1)];
}

function tokenFamilies(t: RedisKeys): FamilySpec[] {
  const source = divine.tokenShardKeys(0);
  const shard = (token: string) => t.tokenShardKeys(t.tokenShardOf(token));
  return [
    perOwner('user_tokens', divine.userTokensKey, t.userTokensKey),
    perOwner('user_tokens_forgetting', divine.userTokensForgettingKey, t.userTokensForgettingKey),
    {
      name: 'token_to_pubkey',
      match: source.owners,
      place: (k) => (k === source.owners ? { copy: 'hash', route: (tk) => shard(tk).owners } : null),
    },
    {
      name: 'stale_tokens',
      match: source.activity,
      place: (k) => (k === source.activity ? { copy: 'zset', route: (tk) => shard(tk).activity } : null),
    },
    {
      name: 'token_timezone_offsets',
      match: source.offsets,
      place: (k) => (k === source.offsets ? { copy: 'hash', route: (tk) => shard(tk).offsets } : null),
    },
    {
      name: 'token_devices',
      match: source.devices,
      place: (k) => (k === source.devices ? { copy: 'hash', route: (tk) => shard(tk).devices } : null),
    },
  ];
}

function userFamilies(t: RedisKeys): FamilySpec[] {
  return [
    perOwner('user_preferences', divine.userPreferencesKey, t.userPreferencesKey),
    perOwner('campaign_consent', divine.campaignConsentKey, t.campaignConsentKey),
    perOwner('profile_cache', divine.profileCacheKey, t.profileCacheKey),
    perOwner('social_filters', divine.socialFiltersKey, t.socialFiltersKey),
    perOwner('quiet_hours', divine.quietHoursKey, t.quietHoursKey),
    perOwner('inbox', divine.inboxKey, t.inboxKey),
    perOwner('user_alertwords', divine.userAlertWordsKey, t.userAlertWordsKey),
    perOwner('notify_subs', divine.notifySubsKey, t.notifySubsKey),
    perOwner('notify_subs_ts', divine.notifySubsTsKey, t.notifySubsTsKey),
    perOwner('notify_watchers', divine.notifyWatchersKey, t.notifyWatchersKey),
    perOwner('coalesce_throttle', divine.coalesceThrottleKey, t.coalesceThrottleKey),
    perOwner('coalesce_emitted', divine.coalesceEmittedKey, t.coalesceEmittedKey),
    perOwner('nip9a_callbacks_of', divine.nip9aCallbacksOfKey, t.nip9aCallbacksOfKey),
    perOwner('digest', divine.digestKey, t.digestKey),
    perOwner('alertword_users', divine.alertWordUsersKey, t.alertWordUsersKey),
    perOwner('nip9a_author', divine.nip9aAuthorKey, t.nip9aAuthorKey),
    perOwner('ntfy_topic', divine.ntfyTopicKey, t.ntfyTopicKey),
    perOwner('ntfy_sched', divine.ntfySchedKey, t.ntfySchedKey),
    perOwner('user_relays', divine.userRelaysKey, t.userRelaysKey),
    {
      name: 'user_relay_users',
      match: divine.userRelayIndexKeys[0] as string,
      place: (k) => (k === divine.userRelayIndexKeys[0] ? { copy: 'set', route: (pubkey) => t.userRelayIndexKey(pubkey) } : null),
    },
    {
      name: 'user_relay_changes',
      match: divine.userRelayChangesKeys[0] as string,
      place: (k) => (k === divine.userRelayChangesKeys[0] ? { copy: 'zset', route: (pubkey) => t.userRelayChangesKey(pubkey) } : null),
    },
    twoParts('push_throttle', 'push_throttle:*', /^push_throttle:([^:]+):(\d+)$/, (pubkey, window) =>
      t.pushThrottleKey(pubkey, Number(window)),
    ),
    twoParts('notify_rate', 'notify_rate:*', /^notify_rate:([^:]+):([^:]+)$/, t.notifyRateKey),
    {
      name: 'inbox_counted',
      match: 'inbox_counted:*',
      place: (key) => {
        const parts = key.startsWith('inbox_counted:') ? splitLast(key.slice('inbox_counted:'.length)) : null;
        return parts ? { copy: 'whole', to: t.inboxCountedKey(parts[0], parts[1]) } : null;
      },
    },
    {
      name: 'notify_subs_lease',
      match: `${prefixOf(divine.notifySubsLeaseKey)}*`,
      place: (k) => (k.startsWith(prefixOf(divine.notifySubsLeaseKey)) ? { copy: 'skip' } : null),
    },
    {
      name: 'user_alertwords_lock',
      match: `${prefixOf(divine.userAlertWordsLockKey)}*`,
      place: (k) => (k.startsWith(prefixOf(divine.userAlertWordsLockKey)) ? { copy: 'skip' } : null),
    },
  ];
}

/** `dedup:*`: event claims keep their names; recipient claims and video records gain the recipient's tag. */
function claimFamily(t: RedisKeys): FamilySpec {
  const videoPrefix = 'dedup:34236:';
  return {
    name: 'dedup',
    match: 'dedup:*',
    place: (key) => {
      if (!key.startsWith('dedup:')) return null;
      if (key.startsWith(videoPrefix)) {
        // `{type}:{owner}:{d}:{recipient}` or the legacy `{owner}:{d}:{recipient}`; a d tag may hold colons.
        const rest = splitLast(key.slice(videoPrefix.length));
        if (!rest) return null;
        const [head, recipient] = rest;
        const first = head.indexOf(':');
        if (first < 0) return null;
        const lead = head.slice(0, first);
        if (HEX64.test(lead)) return { copy: 'whole', to: t.legacyVideoRecordKey(lead, head.slice(first + 1), recipient) };
        const second = head.indexOf(':', first + 1);
        if (second < 0) return null;
        return { copy: 'whole', to: t.videoRecordKey(lead, head.slice(first + 1, second), head.slice(second + 1), recipient) };
      }
      const rest = splitLast(key.slice('dedup:'.length));
      if (!rest || !HEX64.test(rest[1])) return { copy: 'whole', to: t.eventClaimKey(key.slice('dedup:'.length)) };
      const [id, recipient] = rest;
      if (HEX64.test(id)) return { copy: 'whole', to: t.recipientClaimKey(id, recipient) };
      return { copy: 'claim', eventClaim: t.eventClaimKey(key.slice('dedup:'.length)), recipientClaim: t.recipientClaimKey(id, recipient) };
    },
  };
}

function coalesceFamilies(t: RedisKeys): FamilySpec[] {
  const group = (name: string, build: (gid: string) => string, target: (gid: string) => string): FamilySpec => {
    const prefix = prefixOf(build);
    return {
      name,
      match: `${prefix}*`,
      place: (k) => (k.startsWith(prefix) && k.length > prefix.length ? { copy: 'whole', to: target(k.slice(prefix.length)) } : null),
    };
  };
  return [
    group('coalesce_group', divine.coalesceGroupKey, t.coalesceGroupKey),
    group('coalesce_hll', divine.coalesceHllKey, t.coalesceHllKey),
    twoParts('coalesce_disposition', 'coalesce:disp:*', /^coalesce:disp:([^:]+):([^:]+)$/, t.coalesceDispositionKey),
    {
      name: 'coalesce_due',
      match: divine.coalesceDueKey(0),
      place: (k) =>
        k === divine.coalesceDueKey(0) ? { copy: 'zset', route: (gid) => t.coalesceDueKey(t.coalesceOutboxShardOf(gid)) } : null,
    },
    {
      name: 'coalesce_leases',
      match: divine.coalesceLeasesKey(0),
      place: (k) =>
        k === divine.coalesceLeasesKey(0) ? { copy: 'zset', route: (gid) => t.coalesceLeasesKey(t.coalesceOutboxShardOf(gid)) } : null,
    },
  ];
}

/** Every set and hash of the three queues, split by item id into the target's queue shards. */
function queueFamily(t: RedisKeys): FamilySpec {
  type Role = 'ready' | 'leased' | 'dead' | 'items' | 'meta' | 'pending';
  const roles = new Map<string, { queue: QueueName; lane: Lane | null; role: Role }>();
  for (const queue of QUEUE_NAMES) {
    const keys = divine.queueKeys(queue);
    for (const lane of LANES) {
      roles.set(keys.lanes[lane].ready, { queue, lane, role: 'ready' });
      roles.set(keys.lanes[lane].leased, { queue, lane, role: 'leased' });
    }
    for (const role of ['dead', 'items', 'meta', 'pending'] as const) roles.set(keys[role], { queue, lane: null, role });
  }
  return {
    name: 'queues',
    match: 'queue:*',
    place: (key) => {
      const found = roles.get(key);
      if (!found) return null;
      const { queue, lane, role } = found;
      const targetOf = (id: string): string => {
        const shard = t.queueKeys(queue, t.queueShardOf(id));
        if (role === 'ready' || role === 'leased') return shard.lanes[lane ?? 'normal'][role];
        return shard[role];
      };
      return role === 'items' || role === 'meta' ? { copy: 'hash', route: targetOf } : { copy: 'zset', route: targetOf };
    },
  };
}

function bellAndDigestFamilies(t: RedisKeys): FamilySpec[] {
  const enqueuedPrefix = divine.fanoutEnqueuedKey(0, '');
  const jobs = divine.newPostFanoutJobsKey(0);
  const due = divine.digestsDueKeys[0] as string;
  return [
    {
      name: 'fanout_enqueued',
      match: `${enqueuedPrefix}*`,
      place: (key) => {
        const eventId = key.slice(enqueuedPrefix.length);
        if (!key.startsWith(enqueuedPrefix) || eventId === '') return null;
        // The marker's shard is its video's, which its name does not tell: every shard gets it.
        return { copy: 'each', to: Array.from({ length: t.fanoutShards }, (_, shard) => t.fanoutEnqueuedKey(shard, eventId)) };
      },
    },
    {
      name: 'new_post_fanout_jobs',
      match: jobs,
      place: (key) =>
        key === jobs
          ? { copy: 'zset', route: (member) => t.newPostFanoutJobsKey(t.fanoutShardOf(decodeFanoutJob(member)?.eventJson ?? member)) }
          : null,
    },
    { name: 'digests_due', match: due, place: (k) => (k === due ? { copy: 'zset', route: (pubkey) => t.digestsDueKeyOf(pubkey) } : null) },
  ];
}

function inboxAndNtfyFamilies(t: RedisKeys): FamilySpec[] {
  const words = divine.alertWordIndexKeys[0] as string;
  const activity = divine.inboxActivityKeys[0] as string;
  const expiry = divine.ntfyExpiryKeys[0] as string;
  const ids = divine.ntfyIdsKeys[0] as string;
  const due = divine.ntfyDueKeys[0] as string;
  return [
    { name: 'alertwords', match: words, place: (k) => (k === words ? { copy: 'zset', route: (word) => t.alertWordIndexKey(word) } : null) },
    {
      name: 'inbox_active',
      match: activity,
      place: (k) => (k === activity ? { copy: 'zset', route: (pubkey) => t.inboxActivityKey(pubkey) } : null),
    },
    single('announcements', divine.announcementsKey, t.announcementsKey),
    single('announcements_active', divine.activeAnnouncementsKey, t.activeAnnouncementsKey),
    single('announcements_seq', divine.announcementSeqKey, t.announcementSeqKey),
    single('ntfy_head', divine.ntfyHeadKey, t.ntfyHeadKey),
    {
      name: 'ntfy_expiry',
      match: expiry,
      place: (k) => (k === expiry ? { copy: 'zset', route: (topic) => t.ntfyExpiryKeyOf(topic) } : null),
    },
    { name: 'ntfy_ids', match: ids, place: (k) => (k === ids ? { copy: 'hash', route: (id) => t.ntfyIdsKeyOf(id) } : null) },
    {
      name: 'ntfy_due',
      match: due,
      // A member is `<scheduled id> <topic>`: routed by its topic, as the cluster shards it.
      place: (k) => (k === due ? { copy: 'zset', route: (member) => t.ntfyDueKeyOf(member.slice(member.indexOf(' ') + 1)) } : null),
    },
  ];
}

/** The recipient of a delivery-log member (`{uuid}{index}|{entry JSON}`); '' when unreadable. */
function logRecipientOf(member: string): string {
  try {
    const entry: unknown = JSON.parse(member.slice(member.indexOf('|') + 1));
    return typeof entry === 'object' && entry !== null && typeof (entry as { recipient?: unknown }).recipient === 'string'
      ? (entry as { recipient: string }).recipient
      : '';
  } catch {
    return '';
  }
}

function platformFamilies(t: RedisKeys): FamilySpec[] {
  const dueLanes = new Map(LANES.map((lane) => [divine.sendDueShardKeys(lane)[0] as string, lane]));
  return [
    perOwner('apikey', divine.apiKeyKey, t.apiKeyKey),
    single('apikey_hashes', divine.apiKeyHashesKey, t.apiKeyHashesKey),
    single('apikeys', divine.apiKeysKey, t.apiKeysKey),
    twoParts('send', 'send:*', /^send:([^:]+):(.+)$/, t.sendKey),
    {
      name: 'sends_due',
      match: 'sends:due:*',
      place: (key) => {
        const lane = dueLanes.get(key);
        if (lane === undefined) return null;
        return {
          copy: 'zset',
          route: (member) => {
            const at = member.indexOf(':');
            return t.sendDueKey(lane, member.slice(0, at), member.slice(at + 1));
          },
        };
      },
    },
    twoParts('campaign', 'campaign:*', /^campaign:([^:]+):(.+)$/, t.campaignKey),
    {
      name: 'delivery_log',
      match: 'delivery_log:*',
      place: (key) => {
        const byRecipient = /^delivery_log:([^:]+):recipient:(.+)$/.exec(key);
        if (byRecipient) return { copy: 'whole', to: t.deliveryLogRecipientKey(byRecipient[1] as string, byRecipient[2] as string) };
        const byNotification = /^delivery_log:([^:]+):notification:(.+)$/.exec(key);
        if (byNotification) {
          const [, app, id] = byNotification as unknown as [string, string, string];
          return { copy: 'zset', route: (member) => t.deliveryLogNotificationKey(app, id, t.deliveryLogShardOf(logRecipientOf(member))) };
        }
        const all = /^delivery_log:([^:]+)$/.exec(key);
        if (all)
          return { copy: 'zset', route: (member) => t.deliveryLogKey(all[1] as string, t.deliveryLogShardOf(logRecipientOf(member))) };
        return null;
      },
    },
    {
      // A day's counters are summed over the shards by readers: the whole divine hash is shard 0's.
      name: 'delivery_stats',
      match: 'delivery_stats*',
      place: (key) => {
        const days = /^delivery_stats_days:([^:]+)$/.exec(key);
        if (days) return { copy: 'whole', to: t.deliveryStatsDaysKey(days[1] as string, 0) };
        const day = /^delivery_stats:([^:]+):(\d+)$/.exec(key);
        return day ? { copy: 'whole', to: t.deliveryStatsKey(day[1] as string, Number(day[2]), 0) } : null;
      },
    },
    sameName('send_idem', 'send_idem:*'),
    sameName('campaign_idem', 'campaign_idem:*'),
    sameName('campaign_delivery', 'campaign_delivery:*'),
    sameName('campaigns_due', divine.campaignsDueKey, (k) => k === divine.campaignsDueKey),
    sameName('suppressions', 'suppressions:*'),
  ];
}

function operatorFamilies(t: RedisKeys): FamilySpec[] {
  const callbacksReceived = divine.nip9aCallbackActivityKeys[0] as string;
  return [
    sameName('relay_cursors', divine.relayCursorsKey, (k) => k === divine.relayCursorsKey),
    sameName('vapid', divine.vapidKeysKey, (k) => k === divine.vapidKeysKey),
    sameName('fleet_heartbeats', divine.fleetHeartbeatsKey, (k) => k === divine.fleetHeartbeatsKey),
    single('fleet_samples', divine.fleetSamplesKey, t.fleetSamplesKey),
    single('fleet_sample_values', divine.fleetSampleValuesKey, t.fleetSampleValuesKey),
    sameName('console_session', `${prefixOf(divine.consoleSessionKey)}*`),
    single('nip9a_registrations', divine.nip9aRegistrationsKey, t.nip9aRegistrationsKey),
    single('nip9a_relay_counts', divine.nip9aRelayCountsKey, t.nip9aRelayCountsKey),
    single('nip9a_version', divine.nip9aVersionKey, t.nip9aVersionKey),
    sameName('nip9a_outcomes', divine.nip9aOutcomesKey, (k) => k === divine.nip9aOutcomesKey),
    sameName('nip9a_receipt', 'nip9a:receipt:*'),
    {
      name: 'nip9a_callbacks_received',
      match: callbacksReceived,
      place: (k) => (k === callbacksReceived ? { copy: 'zset', route: (id) => t.nip9aCallbackActivityKey(id) } : null),
    },
    // A day's per-client quota: same name in both layouts, and it expires with its day.
    sameName('client_quota', 'client_quota:*'),
    {
      name: 'nip9a_callbacks',
      match: divine.nip9aCallbacksKey(''),
      place: (k) => (k === divine.nip9aCallbacksKey('') ? { copy: 'hash', route: (id) => t.nip9aCallbacksKey(id) } : null),
    },
    {
      name: 'nip9a_callback_secrets',
      match: divine.nip9aCallbackSecretsKey(''),
      place: (k) => (k === divine.nip9aCallbackSecretsKey('') ? { copy: 'hash', route: (hash) => t.nip9aCallbackSecretsKey(hash) } : null),
    },
    { name: 'migrate_progress', match: MIGRATE_PROGRESS_KEY, place: (k) => (k === MIGRATE_PROGRESS_KEY ? { copy: 'skip' } : null) },
  ];
}

/** Every family of a divine store, with targets in the cluster layout `target` (its queue shard count). */
export function divineToClusterFamilySpecs(target: RedisKeys): FamilySpec[] {
  if (target.layout !== 'cluster') throw new RangeError('the layout migration writes the cluster layout');
  return [
    ...tokenFamilies(target),
    ...userFamilies(target),
    claimFamily(target),
    ...coalesceFamilies(target),
    queueFamily(target),
    ...bellAndDigestFamilies(target),
    ...inboxAndNtfyFamilies(target),
    ...platformFamilies(target),
    ...operatorFamilies(target),
  ];
}
