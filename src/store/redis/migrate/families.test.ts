import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeFanoutJob } from '../../fanout-job-codec.ts';
import { createRedisKeys } from '../keys.ts';
import { divineToClusterFamilySpecs, placementOf, type Placement } from './families.ts';

const divine = createRedisKeys('divine');
const cluster = createRedisKeys('cluster', { queueShards: 8 });
const specs = divineToClusterFamilySpecs(cluster);
const PK = 'ab'.repeat(32);
const OTHER = 'cd'.repeat(32);
const EVENT = 'ef'.repeat(32);

function placed(key: string): Placement {
  const found = placementOf(specs, key);
  assert.ok(found, `a family places ${key}`);
  return found.placement;
}

describe('layout migration families (divine → cluster)', () => {
  it('every key a divine builder names goes to the name the cluster builder gives the same arguments', () => {
    const cases: Array<[string, string]> = [
      [divine.userTokensKey(PK), cluster.userTokensKey(PK)],
      [divine.userTokensForgettingKey(PK), cluster.userTokensForgettingKey(PK)],
      [divine.userPreferencesKey(PK), cluster.userPreferencesKey(PK)],
      [divine.notifySubsKey(PK), cluster.notifySubsKey(PK)],
      [divine.notifySubsTsKey(PK), cluster.notifySubsTsKey(PK)],
      [divine.notifyWatchersKey(PK), cluster.notifyWatchersKey(PK)],
      [divine.notifyRateKey(PK, OTHER), cluster.notifyRateKey(PK, OTHER)],
      [divine.inboxKey(PK), cluster.inboxKey(PK)],
      [divine.inboxCountedKey(`like:${EVENT}:extra`, PK), cluster.inboxCountedKey(`like:${EVENT}:extra`, PK)],
      [divine.eventClaimKey(EVENT), cluster.eventClaimKey(EVENT)],
      [divine.recipientClaimKey(EVENT, PK), cluster.recipientClaimKey(EVENT, PK)],
      [divine.videoRecordKey('newPost', OTHER, 'a:d:with:colons', PK), cluster.videoRecordKey('newPost', OTHER, 'a:d:with:colons', PK)],
      [divine.legacyVideoRecordKey(OTHER, 'plain-d', PK), cluster.legacyVideoRecordKey(OTHER, 'plain-d', PK)],
      [divine.coalesceGroupKey(`like:${PK}:e:${EVENT}:123`), cluster.coalesceGroupKey(`like:${PK}:e:${EVENT}:123`)],
      [divine.coalesceHllKey(`like:${PK}:e:${EVENT}:123`), cluster.coalesceHllKey(`like:${PK}:e:${EVENT}:123`)],
      [divine.coalesceDispositionKey(EVENT, PK), cluster.coalesceDispositionKey(EVENT, PK)],
      [divine.coalesceThrottleKey(PK), cluster.coalesceThrottleKey(PK)],
      [divine.pushThrottleKey(PK, 1_700_000_000), cluster.pushThrottleKey(PK, 1_700_000_000)],
      [divine.digestKey(PK), cluster.digestKey(PK)],
      [divine.alertWordUsersKey('bitcoin'), cluster.alertWordUsersKey('bitcoin')],
      [divine.ntfyTopicKey('upAbC123'), cluster.ntfyTopicKey('upAbC123')],
      [divine.ntfyHeadKey, cluster.ntfyHeadKey],
      [divine.ntfySchedKey('upAbC123'), cluster.ntfySchedKey('upAbC123')],
      [divine.announcementsKey, cluster.announcementsKey],
      [divine.announcementSeqKey, cluster.announcementSeqKey],
      [divine.apiKeyKey('key-1'), cluster.apiKeyKey('key-1')],
      [divine.apiKeyHashesKey, cluster.apiKeyHashesKey],
      [divine.sendKey('clips', 'n:1'), cluster.sendKey('clips', 'n:1')],
      [divine.campaignKey('default', 'spring'), cluster.campaignKey('default', 'spring')],
      [divine.deliveryLogRecipientKey('default', PK), cluster.deliveryLogRecipientKey('default', PK)],
      [divine.deliveryStatsKey('default', 20_000, 0), cluster.deliveryStatsKey('default', 20_000, 0)],
      [divine.nip9aAuthorKey(PK), cluster.nip9aAuthorKey(PK)],
      [divine.userRelaysKey(PK), cluster.userRelaysKey(PK)],
      [divine.nip9aRegistrationsKey, cluster.nip9aRegistrationsKey],
      [divine.fleetSamplesKey, cluster.fleetSamplesKey],
      [divine.relayCursorsKey, cluster.relayCursorsKey],
      [divine.campaignDeliveryKey(`default:spring:${PK}`), cluster.campaignDeliveryKey(`default:spring:${PK}`)],
    ];
    for (const [from, to] of cases) assert.deepEqual(placed(from), { copy: 'whole', to }, `${from} → ${to}`);
  });

  it('split keys route each member to the shard the cluster layout reads it from', () => {
    const route = (key: string, member: string): string => {
      const placement = placed(key);
      assert.ok(placement.copy === 'hash' || placement.copy === 'zset' || placement.copy === 'set', `${key} is split`);
      return placement.route(member);
    };
    assert.equal(route(divine.userRelayIndexKeys[0] as string, PK), cluster.userRelayIndexKey(PK));
    assert.equal(placed(divine.userRelayIndexKeys[0] as string).copy, 'set', 'the index of users with lists is a SET');
    assert.equal(route(divine.userRelayChangesKeys[0] as string, PK), cluster.userRelayChangesKey(PK));
    const token = 'fcm-token-123';
    assert.equal(route(divine.tokenShardKeys(0).owners, token), cluster.tokenShardKeys(cluster.tokenShardOf(token)).owners);
    assert.equal(route(divine.tokenShardKeys(0).activity, token), cluster.tokenShardKeys(cluster.tokenShardOf(token)).activity);
    const id = 'item-42';
    const shard = cluster.queueKeys('outbound', cluster.queueShardOf(id));
    assert.equal(route(divine.queueKeys('outbound').items, id), shard.items);
    assert.equal(route(divine.queueKeys('outbound').lanes.critical.ready, id), shard.lanes.critical.ready);
    assert.equal(route(divine.queueKeys('outbound').lanes.normal.leased, id), shard.lanes.normal.leased);
    assert.equal(route(divine.queueKeys('outbound').dead, id), shard.dead);
    const eventJson = JSON.stringify({ id: EVENT, kind: 34236 });
    const job = encodeFanoutJob({ eventJson, cursor: '0', senderName: null, attempt: 0, expiresAt: 1 });
    assert.equal(
      route(divine.newPostFanoutJobsKey(0), job),
      cluster.newPostFanoutJobsKey(cluster.fanoutShardOf(eventJson)),
      "a job goes with its video's shard",
    );
    const logMember = `uuid000001|${JSON.stringify({ appId: 'default', recipient: PK, notificationId: 'n-1' })}`;
    assert.equal(route(divine.deliveryLogKey('default', 0), logMember), cluster.deliveryLogKey('default', cluster.deliveryLogShardOf(PK)));
    assert.equal(
      route(divine.deliveryLogNotificationKey('default', 'n-1', 0), logMember),
      cluster.deliveryLogNotificationKey('default', 'n-1', cluster.deliveryLogShardOf(PK)),
    );
    assert.equal(route(divine.alertWordIndexKeys[0] as string, 'bitcoin'), cluster.alertWordIndexKey('bitcoin'));
    assert.equal(route(divine.sendDueShardKeys('low')[0] as string, 'clips:n:1'), cluster.sendDueKey('low', 'clips', 'n:1'));
    assert.equal(
      route(divine.coalesceDueKey(0), `like:${PK}:x:1`),
      cluster.coalesceDueKey(cluster.coalesceOutboxShardOf(`like:${PK}:x:1`)),
    );
    assert.equal(route(divine.ntfyIdsKeys[0] as string, '1700000000000-0'), cluster.ntfyIdsKeyOf('1700000000000-0'));
    assert.equal(route(divine.ntfyDueKeys[0] as string, 'AbCdEf123456 upAbC123'), cluster.ntfyDueKeyOf('upAbC123'));
    assert.equal(route(divine.digestsDueKeys[0] as string, PK), cluster.digestsDueKeyOf(PK));
  });

  it('a claim on an id ending with a pubkey is told by its value: an event claim or a recipient claim', () => {
    for (const id of [`nip98:${EVENT}`, `opened:default:n-1:${PK}`, `dm-push-window:${PK}`, `coalesce:like:${PK}:x:1:${PK}`]) {
      const last = id.lastIndexOf(':');
      assert.deepEqual(placed(divine.eventClaimKey(id)), {
        copy: 'claim',
        eventClaim: cluster.eventClaimKey(id),
        recipientClaim: cluster.recipientClaimKey(id.slice(0, last), id.slice(last + 1)),
      });
    }
  });

  it('a fan-out marker goes to every shard; locks and leases are skipped; an unknown key is placed by no family', () => {
    assert.deepEqual(placed(divine.fanoutEnqueuedKey(0, EVENT)), {
      copy: 'each',
      to: Array.from({ length: cluster.fanoutShards }, (_, shard) => cluster.fanoutEnqueuedKey(shard, EVENT)),
    });
    assert.deepEqual(placed(divine.notifySubsLeaseKey(PK)), { copy: 'skip' });
    assert.deepEqual(placed(divine.userAlertWordsLockKey(PK)), { copy: 'skip' });
    assert.equal(placementOf(specs, 'something_else:1'), null, 'an unknown key');
    assert.equal(placementOf(specs, `${divine.userTokensKey(PK)}:extra`), null, 'a per-user name with more parts');
  });

  it('every pattern is an exact name or a fixed prefix and *, which is all the pattern check understands', () => {
    for (const spec of specs) assert.match(spec.match, /^[^*?[\]\\]+\*?$/, `${spec.name}: ${spec.match}`);
  });
});
