import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CampaignRequest, NewCampaign } from '../../../src/store/port-campaigns.ts';
import { SECOND_MS, type ContractContext } from './context.ts';

const IN_FLIGHT_SECS = 600;
const DEDUP_SECS = 7 * 86_400;
const LEASE_MS = 30 * SECOND_MS;
const request = (key = 'spring-sale', title = 'Spring sale'): CampaignRequest => ({
  idempotencyKey: key,
  title,
  body: 'Everything is 21 sats',
  data: { url: 'https://example.com' },
  audience: 'all',
});
const newCampaign = (id: string, key = 'spring-sale', appId = 'default', hash = 'h1'): NewCampaign => ({
  appId,
  id,
  request: request(key),
  requestHash: hash,
});
const pubkey = (n: number) => n.toString(16).padStart(64, '0');

/** The contract of port-campaigns.ts: records, idempotency, the paged schedule, counters, the device scan, consent, claims. */
export function campaignContract(ctx: ContractContext): void {
  describe('campaigns', () => {
    test('a created campaign reads back running at the start, its request as given; another app does not see it', async () => {
      const store = ctx.store();
      assert.deepEqual(await store.createCampaign(newCampaign('c1')), { created: true });
      assert.deepEqual(await store.getCampaign('default', 'c1'), {
        ...newCampaign('c1'),
        state: 'running',
        createdAtMs: ctx.clock().nowMs(),
        cursor: '',
        counts: { consenting: 0, deferred: 0, sent: 0, failed: 0, opened: 0 },
      });
      assert.equal(await store.getCampaign('other', 'c1'), null);
      assert.equal(await store.getCampaign('default', 'c2'), null);
    });

    test('the same idempotency key names the first campaign (same request or not); another app may use it', async () => {
      const store = ctx.store();
      await store.createCampaign(newCampaign('c1'));
      assert.deepEqual(await store.createCampaign(newCampaign('c2')), { created: false, existingId: 'c1', sameRequest: true });
      assert.deepEqual(await store.createCampaign(newCampaign('c3', 'spring-sale', 'default', 'h2')), {
        created: false,
        existingId: 'c1',
        sameRequest: false,
      });
      assert.equal(await store.getCampaign('default', 'c2'), null);
      assert.deepEqual(await store.createCampaign(newCampaign('c4', 'spring-sale', 'other')), { created: true });
    });

    test('a campaign is handed out page by page, leased, resumed from its cursor with its counts, and done at the end', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.createCampaign(newCampaign('c1'));
      const first = await store.claimDueCampaign(LEASE_MS);
      assert.equal(first?.campaign.id, 'c1');
      assert.equal(first.leaseExpiresAtMs, clock.nowMs() + LEASE_MS);
      // Leased: nobody else gets it until the lease runs out (a worker killed mid-page).
      assert.equal(await store.claimDueCampaign(LEASE_MS), null);
      clock.advance(LEASE_MS);
      const again = await store.claimDueCampaign(LEASE_MS);
      assert.equal(again?.campaign.cursor, '', 'the killed page is redone from the same cursor');
      assert.equal(await store.advanceCampaign('default', 'c1', 'page-2', { consenting: 5, deferred: 2 }), true);
      const second = await store.claimDueCampaign(LEASE_MS);
      assert.equal(second?.campaign.cursor, 'page-2', 'the next page is due at once');
      assert.deepEqual(second.campaign.counts, { consenting: 5, deferred: 2, sent: 0, failed: 0, opened: 0 });
      assert.equal(await store.advanceCampaign('default', 'c1', null, { consenting: 1 }), true);
      assert.equal(await store.claimDueCampaign(LEASE_MS), null);
      const done = await store.getCampaign('default', 'c1');
      assert.equal(done?.state, 'done');
      assert.equal(done.counts.consenting, 6);
      assert.equal(await store.advanceCampaign('default', 'c1', 'x', { consenting: 1 }), false, 'a done campaign takes no more pages');
      assert.equal(await store.advanceCampaign('default', 'nope', 'x', {}), false);
    });

    test('the oldest due campaign is handed out first', async () => {
      const store = ctx.store();
      await store.createCampaign(newCampaign('c1', 'k1'));
      ctx.clock().advance(SECOND_MS);
      await store.createCampaign(newCampaign('c2', 'k2'));
      assert.equal((await store.claimDueCampaign(LEASE_MS))?.campaign.id, 'c1');
      assert.equal((await store.claimDueCampaign(LEASE_MS))?.campaign.id, 'c2');
    });

    test('counters add up, and a counter of an unknown campaign creates nothing', async () => {
      const store = ctx.store();
      await store.createCampaign(newCampaign('c1'));
      await store.countCampaign('default', 'c1', 'sent', 3);
      await store.countCampaign('default', 'c1', 'failed', 1);
      await store.countCampaign('default', 'c1', 'opened', 2);
      await store.countCampaign('default', 'c1', 'sent', 1);
      assert.deepEqual((await store.getCampaign('default', 'c1'))?.counts, { consenting: 0, deferred: 0, sent: 4, failed: 1, opened: 2 });
      await store.countCampaign('default', 'ghost', 'sent', 1);
      assert.equal(await store.getCampaign('default', 'ghost'), null);
    });

    test('the device scan visits every registered device with its owner, page by page, to the end', async () => {
      const store = ctx.store();
      const expected = new Set<string>();
      // More than Redis keeps in a compact hash (hash-max-listpack-entries, 512 here), so HSCAN pages too.
      for (let i = 0; i < 600; i++) {
        const owner = pubkey(i % 200);
        await store.registerToken(owner, { token: `tok-${i}`, transport: 'fcm' });
        expected.add(`${owner}/tok-${i}`);
      }
      const seen = new Set<string>();
      let cursor: string | null = '';
      let pages = 0;
      while (cursor !== null) {
        const page = await store.scanDeviceOwners(cursor, 100);
        for (const entry of page.entries) seen.add(`${entry.pubkey}/${entry.token}`);
        cursor = page.next;
        assert.ok(++pages < 100, 'the scan ends');
      }
      assert.deepEqual([...seen].sort(), [...expected].sort());
      assert.ok(pages > 1, 'more than one page');
    });

    test('the device scan of an empty store ends at once', async () => {
      const page = await ctx.store().scanDeviceOwners('', 10);
      assert.deepEqual(page, { entries: [], next: null });
    });

    test('consent is read per user in the order asked: only campaignsEnabled true counts, a user without preferences has none', async () => {
      const store = ctx.store();
      await store.setPreferences(pubkey(1), { kinds: [7], campaignsEnabled: true });
      await store.setPreferences(pubkey(2), { kinds: [7], campaignsEnabled: false });
      await store.setPreferences(pubkey(4), { kinds: [], campaignsEnabled: true });
      assert.deepEqual(await store.readCampaignConsent([pubkey(2), pubkey(1), pubkey(3), pubkey(4)]), [false, true, false, true]);
      await store.setPreferences(pubkey(1), { kinds: [7], campaignsEnabled: false });
      assert.deepEqual(await store.readCampaignConsent([pubkey(1)]), [false]);
      assert.deepEqual(await store.readCampaignConsent([]), []);
    });

    describe('delivery claims', () => {
      const key = 'default:spring-sale:device-1';

      test('a claim is held for the in-flight window: a second claim is refused while it runs', async () => {
        const store = ctx.store();
        const owner = await store.claimCampaignDelivery(key, IN_FLIGHT_SECS);
        assert.ok(owner);
        assert.equal(await store.claimCampaignDelivery(key, IN_FLIGHT_SECS), null);
        const ttl = await store.campaignDeliveryTtlSecs(key);
        assert.ok(ttl !== null && ttl >= IN_FLIGHT_SECS - 1 && ttl <= IN_FLIGHT_SECS, `in-flight TTL ${ttl}`);
        assert.notEqual(await store.claimCampaignDelivery('default:spring-sale:device-2', IN_FLIGHT_SECS), null, 'per device');
      });

      test('an accepted push extends the claim to the dedup TTL; it is then refused again', async () => {
        const store = ctx.store();
        const owner = await store.claimCampaignDelivery(key, IN_FLIGHT_SECS);
        assert.ok(owner);
        assert.equal(await store.extendCampaignDelivery(key, owner, DEDUP_SECS), true);
        const ttl = await store.campaignDeliveryTtlSecs(key);
        assert.ok(ttl !== null && ttl > DEDUP_SECS - 5 && ttl <= DEDUP_SECS, `dedup TTL ${ttl}`);
        assert.equal(await store.claimCampaignDelivery(key, IN_FLIGHT_SECS), null);
      });

      test('an outcome that sends nothing drops the claim, and the next attempt may take it', async () => {
        const store = ctx.store();
        const owner = await store.claimCampaignDelivery(key, IN_FLIGHT_SECS);
        assert.ok(owner);
        assert.equal(await store.releaseCampaignDelivery(key, owner), true);
        assert.equal(await store.campaignDeliveryTtlSecs(key), null);
        assert.notEqual(await store.claimCampaignDelivery(key, IN_FLIGHT_SECS), null);
      });

      test('many claims in one call: each key taken once, a held key refused, a repeated key refused after its first', async () => {
        const store = ctx.store();
        assert.deepEqual(await store.claimCampaignDeliveries([], IN_FLIGHT_SECS), []);
        const held = await store.claimCampaignDelivery(key, IN_FLIGHT_SECS);
        assert.ok(held);
        const keys = ['default:spring-sale:device-2', key, 'default:spring-sale:device-3', 'default:spring-sale:device-2'];
        const owners = await store.claimCampaignDeliveries(keys, IN_FLIGHT_SECS);
        assert.equal(owners.length, keys.length);
        assert.ok(owners[0], 'a free key is taken');
        assert.equal(owners[1], null, 'a held key is refused');
        assert.ok(owners[2]);
        assert.notEqual(owners[0], owners[2], 'each claim has its own owner token');
        assert.equal(owners[3], null, 'a key repeated in the batch is refused after its first');
        const ttl = await store.campaignDeliveryTtlSecs('default:spring-sale:device-3');
        assert.ok(ttl !== null && ttl >= IN_FLIGHT_SECS - 1 && ttl <= IN_FLIGHT_SECS, `in-flight TTL ${ttl}`);
        // A batch-taken claim follows the same lifecycle: extended by its owner, refused after.
        assert.equal(await store.extendCampaignDelivery('default:spring-sale:device-2', owners[0], DEDUP_SECS), true);
        assert.deepEqual(await store.claimCampaignDeliveries(['default:spring-sale:device-2'], IN_FLIGHT_SECS), [null]);
        assert.equal(await store.releaseCampaignDelivery('default:spring-sale:device-3', owners[2]), true);
        const [again] = await store.claimCampaignDeliveries(['default:spring-sale:device-3'], IN_FLIGHT_SECS);
        assert.ok(again, 'a dropped claim may be taken again');
      });

      test('a stale attempt neither drops nor extends a successor claim; a dropped claim is not extended back', async () => {
        const store = ctx.store();
        const first = await store.claimCampaignDelivery(key, IN_FLIGHT_SECS);
        assert.ok(first);
        assert.equal(await store.releaseCampaignDelivery(key, first), true);
        assert.equal(await store.extendCampaignDelivery(key, first, DEDUP_SECS), false, 'not resurrected');
        assert.equal(await store.campaignDeliveryTtlSecs(key), null);
        const second = await store.claimCampaignDelivery(key, IN_FLIGHT_SECS);
        assert.ok(second);
        assert.equal(await store.releaseCampaignDelivery(key, first), false);
        assert.equal(await store.extendCampaignDelivery(key, first, DEDUP_SECS), false);
        const ttl = await store.campaignDeliveryTtlSecs(key);
        assert.ok(ttl !== null && ttl <= IN_FLIGHT_SECS, 'the successor keeps its own window');
      });
    });
  });
}
