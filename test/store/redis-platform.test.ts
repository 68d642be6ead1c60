/**
 * Redis-only behaviour of the app platform's multi-step operations (sends, campaigns, NIP-9a
 * callbacks and receipts, the delivery log), which the adapter-neutral contract cannot see: the
 * state a crash leaves between two one-slot steps (written here by hand, as the first step
 * would have left it), and that the retry or the next operation completes it without doubling.
 * Runs in both key layouts on a private redis-server (the cluster layout's names on one server:
 * the steps are the same code), plus the divine layout's exact names and the cluster layout's
 * slots.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import calculateKeySlot from 'cluster-key-slot';
import type { NewCampaign } from '../../src/store/port-campaigns.ts';
import type { NewSend } from '../../src/store/port-sends.ts';
import type { Nip9aCallback } from '../../src/store/port-nip9a-callbacks.ts';
import { openRedisStore, type RedisStore } from '../../src/store/redis/index.ts';
import { createRedisKeys, KEY_LAYOUTS, type KeyLayout } from '../../src/store/redis/keys.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

const DB = 5;
const SECOND_MS = 1000;
const START_MS = 1_767_225_600_000;
const RECORD_TTL_SECS = 7 * 86_400;
const LEASE_MS = 30 * SECOND_MS;
const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);

const newSend = (id: string): NewSend => ({
  appId: 'default',
  id,
  request: { recipients: [ALICE], type: 'payout', title: 'Payout sent', body: '21 sats', priority: 'normal' },
  sendAtMs: START_MS,
});
const idem = { key: 'key-1', requestHash: 'hash-a', ttlSecs: 86_400 };
const newCampaign = (id: string): NewCampaign => ({
  appId: 'default',
  id,
  request: { idempotencyKey: 'spring', title: 'Spring', body: 'sale', audience: 'all' },
  requestHash: 'h1',
});
const callback = (id: string, owner = ALICE): Nip9aCallback => ({
  id,
  secretHash: `${id}-secret`.padEnd(64, '0'),
  secretHint: 'abcd',
  owner,
  relay: 'wss://relay.example/',
  createdAtMs: START_MS,
});

let server: PrivateRedisServer;
let raw: Redis;

before(async () => {
  server = await startRedisServer();
  raw = new Redis(`${server.url}/${DB}`);
});

after(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
  await raw?.quit();
  await server?.stop();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

for (const layout of KEY_LAYOUTS) {
  describe(`platform steps, ${layout} layout`, () => {
    const keys = createRedisKeys(layout);
    let clock: ManualClock;
    let store: RedisStore;

    beforeEach(async () => {
      await raw.flushdb();
      clock = new ManualClock(START_MS);
      store = await openRedisStore({ url: `${server.url}/${DB}`, clock, layout });
    });

    afterEach(async () => {
      await store.close();
    });

    const dueKey = keys.sendDueKey('normal', 'default', 'n1');

    test('a send whose create died after taking its idempotency key is created by the retry, and handed out once', async () => {
      await raw.set(keys.sendIdempotencyKey('default', idem.key), JSON.stringify({ id: 'n1', hash: idem.requestHash, atMs: START_MS }));
      assert.equal(await store.getSend('default', 'n1'), null, 'step 1 only: no record');
      assert.deepEqual(await store.createSend(newSend('n2'), RECORD_TTL_SECS, idem), {
        created: false,
        existingId: 'n1',
        sameRequest: true,
      });
      assert.equal((await store.getSend('default', 'n1'))?.state, 'scheduled', 'the retry wrote the first id');
      assert.equal(await store.getSend('default', 'n2'), null, "the retry's own id is unused");
      await store.createSend(newSend('n3'), RECORD_TTL_SECS, idem);
      assert.equal(await raw.zcard(dueKey), 1, 'due once, however many retries');
      assert.equal((await store.claimDueSend(LEASE_MS))?.send.id, 'n1');
      assert.equal(await store.claimDueSend(LEASE_MS), null, 'handed out once');
    });

    test('a send whose create died before its due member is made due by the retry; a different request is not', async () => {
      await store.createSend(newSend('n1'), RECORD_TTL_SECS, idem);
      await raw.zrem(dueKey, 'default:n1');
      await store.createSend(newSend('n2'), RECORD_TTL_SECS, { ...idem, requestHash: 'hash-b' });
      assert.equal(await store.claimDueSend(LEASE_MS), null, 'another request under the key completes nothing');
      await store.createSend(newSend('n2'), RECORD_TTL_SECS, idem);
      assert.equal((await store.claimDueSend(LEASE_MS))?.send.id, 'n1');
    });

    test('a retry after the record could have expired does not make the send again', async () => {
      await raw.set(keys.sendIdempotencyKey('default', idem.key), JSON.stringify({ id: 'n1', hash: idem.requestHash, atMs: START_MS }));
      clock.advance(RECORD_TTL_SECS * SECOND_MS);
      await store.createSend(newSend('n2'), RECORD_TTL_SECS, idem);
      assert.equal(await store.getSend('default', 'n1'), null);
      assert.equal(await raw.zcard(dueKey), 0);
    });

    test('a claim that died after leasing the member hands the send out when the lease runs out', async () => {
      await store.createSend(newSend('n1'), RECORD_TTL_SECS, null);
      await raw.zadd(dueKey, START_MS + LEASE_MS, 'default:n1');
      assert.equal(await store.claimDueSend(LEASE_MS), null, 'leased by the dead worker');
      assert.equal((await store.getSend('default', 'n1'))?.state, 'scheduled');
      clock.advance(LEASE_MS);
      assert.equal((await store.claimDueSend(LEASE_MS))?.send.state, 'started');
    });

    test('a cancel that died before removing the member: the next claim drops it', async () => {
      await store.createSend(newSend('n1'), RECORD_TTL_SECS, null);
      await raw.hset(keys.sendKey('default', 'n1'), 'state', 'cancelled');
      assert.equal(await store.claimDueSend(LEASE_MS), null);
      assert.equal(await raw.zscore(dueKey, 'default:n1'), null, 'dropped from the schedule');
      assert.equal(await store.cancelSend('default', 'n1'), 'cancelled', 'cancelling again completes');
    });

    test('a campaign whose create died after its idempotency key, or before its due member, is completed by the retry once', async () => {
      await raw.set(keys.campaignIdempotencyKey('default', 'spring'), JSON.stringify({ id: 'c1', hash: 'h1' }));
      assert.deepEqual(await store.createCampaign(newCampaign('c2')), { created: false, existingId: 'c1', sameRequest: true });
      assert.equal((await store.getCampaign('default', 'c1'))?.state, 'running');
      await raw.zrem(keys.campaignsDueKey, 'default:c1');
      await store.createCampaign(newCampaign('c3'));
      assert.equal(await raw.zcard(keys.campaignsDueKey), 1);
      assert.equal((await store.claimDueCampaign(LEASE_MS))?.campaign.id, 'c1');
      assert.equal(await store.claimDueCampaign(LEASE_MS), null);
    });

    test('a callback revoke that died after dropping the secret, or the record, completes when repeated', async () => {
      await store.createNip9aCallback(callback('cb-1'));
      await store.createNip9aCallback(callback('cb-2'));
      await raw.hdel(keys.nip9aCallbackSecretsKey(callback('cb-1').secretHash), callback('cb-1').secretHash);
      assert.equal(await store.findNip9aCallback(callback('cb-1').secretHash), null, 'the URL stopped working first');
      assert.deepEqual(
        (await store.listNip9aCallbacks(ALICE)).map((c) => c.id),
        ['cb-1', 'cb-2'],
        'still listed, so it can be revoked',
      );
      assert.equal(await store.revokeNip9aCallback(ALICE, 'cb-1'), true);
      await raw.hdel(keys.nip9aCallbackSecretsKey(callback('cb-2').secretHash), callback('cb-2').secretHash);
      await raw.hdel(keys.nip9aCallbacksKey('cb-2'), 'cb-2');
      assert.deepEqual(await store.listNip9aCallbacks(ALICE), [], 'a listed id without a record is skipped');
      assert.equal(await store.revokeNip9aCallback(ALICE, 'cb-2'), false);
      assert.equal(await raw.zcard(keys.nip9aCallbacksOfKey(ALICE)), 0, 'and dropped from the list');
    });

    test('a callback create refused for a repeated secret hash leaves no record behind', async () => {
      await store.createNip9aCallback(callback('cb-1'));
      await assert.rejects(store.createNip9aCallback({ ...callback('cb-2'), secretHash: callback('cb-1').secretHash }));
      assert.equal(await raw.hget(keys.nip9aCallbacksKey('cb-2'), 'cb-2'), null);
      assert.deepEqual(
        (await store.listNip9aCallbacks(ALICE)).map((c) => c.id),
        ['cb-1'],
      );
    });
  });
}

describe('platform key names', () => {
  let store: RedisStore;
  const open = async (layout: KeyLayout) => {
    await raw.flushdb();
    store = await openRedisStore({ url: `${server.url}/${DB}`, clock: new ManualClock(START_MS), layout });
  };

  afterEach(async () => {
    await store.close();
  });

  test('the divine layout keeps the platform names of a single Redis', async () => {
    await open('divine');
    await store.createSend(newSend('n1'), RECORD_TTL_SECS, idem);
    await store.createCampaign(newCampaign('c1'));
    await store.appendDeliveryLog([{ appId: 'default', notificationId: 'n1', recipient: ALICE, type: 'payout', status: 'sent' }]);
    await store.createNip9aCallback(callback('cb-1'));
    const day = Math.floor(START_MS / 86_400_000);
    assert.deepEqual((await raw.keys('*')).sort(), [
      'campaign:default:c1',
      'campaign_idem:default:spring',
      'campaigns:due',
      `delivery_log:default`,
      `delivery_log:default:notification:n1`,
      `delivery_log:default:recipient:${ALICE}`,
      `delivery_stats:default:${day}`,
      'delivery_stats_days:default',
      'nip9a:callback_secrets',
      'nip9a:callbacks',
      `nip9a:callbacks_of:${ALICE}`,
      // Callback URLs by their last received day, for the janitor (issue 35, idle expiry).
      'nip9a:callbacks_received',
      'send:default:n1',
      'send_idem:default:key-1',
      'sends:due:normal',
    ]);
  });

  test("the cluster layout writes a delivery-log entry's keys in its recipient's slot, and splits recipients over shards", async () => {
    await open('cluster');
    const keys = createRedisKeys('cluster');
    const recipients = Array.from({ length: 32 }, (_, i) => i.toString(16).padStart(64, '0'));
    await store.appendDeliveryLog(
      recipients.map((recipient) => ({ appId: 'default', notificationId: 'n1', recipient, type: 'payout', status: 'sent' })),
    );
    const shards = new Set(recipients.map(keys.deliveryLogShardOf));
    assert.ok(shards.size > 1, `32 recipients fall in ${shards.size} shard(s)`);
    for (const recipient of [ALICE, BOB, ...recipients]) {
      const shard = keys.deliveryLogShardOf(recipient);
      const slots = new Set(
        [
          keys.deliveryLogKey('default', shard),
          keys.deliveryLogRecipientKey('default', recipient),
          keys.deliveryLogNotificationKey('default', 'n1', shard),
          keys.deliveryStatsKey('default', 1, shard),
          keys.deliveryStatsDaysKey('default', shard),
        ].map(calculateKeySlot),
      );
      assert.equal(slots.size, 1, `one slot for ${recipient}'s entry keys`);
    }
    assert.equal((await store.readDeliveryLog('default', { notificationId: 'n1', limit: 100 })).length, 32, 'read back from every shard');
    assert.deepEqual(await store.deliveryOpenRates('default', START_MS), [{ type: 'payout', sent: 32, opened: 0 }]);
  });
});
