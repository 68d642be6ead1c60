import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { TOKEN_ACTIVITY_RESOLUTION_MS, type QueueName, type StorePort } from '../../src/store/port.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { bellContract } from './contract/bells.ts';
import { claimContract } from './contract/claims.ts';
import { coalesceContract } from './contract/coalesce.ts';
import { DAY_MS, totals, type ContractContext } from './contract/context.ts';
import { deadLetterContract } from './contract/dead-letters.ts';
import { dlqContract } from './contract/dlq.ts';
import { laneContract } from './contract/lanes.ts';
import { ntfyContract } from './contract/ntfy.ts';
import { ntfyScheduledContract } from './contract/ntfy-scheduled.ts';
import { LEASE, queueContract } from './contract/queues.ts';
import { deliveryContract } from './contract/deliveries.ts';
import { recordContract } from './contract/records.ts';
import { tokenContract } from './contract/tokens.ts';
import { vapidContract } from './contract/vapid.ts';
import { apiKeyContract } from './contract/apikeys.ts';
import { sendContract } from './contract/sends.ts';
import { deliveryLogContract } from './contract/delivery-log.ts';
import { socialFilterContract } from './contract/social-filters.ts';
import { userRelayContract } from './contract/user-relays.ts';
import { inboxContract } from './contract/inbox.ts';
import { nip9aGatewayContract } from './contract/nip9a-gateway.ts';
import { nip9aCallbackContract } from './contract/nip9a-callbacks.ts';
import { fleetContract } from './contract/fleet.ts';
import { throttleContract } from './contract/throttle.ts';
import { campaignContract } from './contract/campaigns.ts';
import { suppressionContract } from './contract/suppressions.ts';
import { quietHoursContract } from './contract/quiet-hours.ts';
import { storageBoundsContract } from './contract/storage-bounds.ts';
import { rateLimitContract } from './contract/rate-limits.ts';

/**
 * The store contract: the definition of correct {@link StorePort} behaviour, run against every
 * adapter (`sqlite.test.ts`, `redis*.test.ts`).
 *
 * Rules that keep it adapter-neutral:
 * - only the port and the {@link ManualClock} are used: no SQL, no Redis keys, no sleeping;
 * - every test gets a fresh store from `make` and closes it afterwards;
 * - TTL expiry (claims, profile cache) is not tested here, because Redis expires those keys by its
 *   own clock; each adapter tests it in its own file;
 * - token activity times are compared at whole seconds (Redis keeps unix seconds) and clock steps
 *   between activity checks are at least a minute;
 * - queue ordering is only asserted between items with distinct availability times.
 *
 * Chosen semantics the suite pins down (both adapters must agree):
 * - `queueStats` counts by state at call time, and an item whose lease expired counts as `ready`;
 * - a re-registration replaces the whole device description (fields it omits are cleared);
 * - optional fields never given are absent from results, never present as `undefined`;
 * - `lease` keeps filling its batch past items it dead-letters for `maxAttempts`.
 */
export interface StoreContractOptions {
  /** Name of the top-level `describe` block. */
  name: string;
  /** A fresh, empty store on `clock`. Called before every test; the store is closed after it. */
  make: (clock: ManualClock) => Promise<StorePort>;
}

const QUEUES: readonly QueueName[] = ['inbound', 'outbound', 'nip9a'];
const MANY_OPERATIONS = 300;

export function runStoreContract(options: StoreContractOptions): void {
  describe(options.name, () => {
    let clock: ManualClock | undefined;
    let store: StorePort | undefined;

    beforeEach(async () => {
      clock = new ManualClock();
      store = await options.make(clock);
    });

    afterEach(async () => {
      await store?.close();
      store = undefined;
      clock = undefined;
    });

    const ctx: ContractContext = {
      store: () => {
        assert.ok(store, 'store is only available inside a test');
        return store;
      },
      clock: () => {
        assert.ok(clock, 'clock is only available inside a test');
        return clock;
      },
    };

    tokenContract(ctx);
    claimContract(ctx);
    deliveryContract(ctx);
    recordContract(ctx);
    // capability contracts (port-*.ts): one call each below
    coalesceContract(ctx);
    ntfyContract(ctx);
    ntfyScheduledContract(ctx);
    bellContract(ctx);
    vapidContract(ctx);
    apiKeyContract(ctx);
    sendContract(ctx);
    deliveryLogContract(ctx);
    socialFilterContract(ctx);
    userRelayContract(ctx);
    inboxContract(ctx);
    nip9aGatewayContract(ctx);
    nip9aCallbackContract(ctx);
    fleetContract(ctx);
    throttleContract(ctx);
    campaignContract(ctx);
    suppressionContract(ctx);
    quietHoursContract(ctx);
    storageBoundsContract(ctx);
    rateLimitContract(ctx);
    for (const queue of QUEUES) {
      queueContract(ctx, queue);
      deadLetterContract(ctx, queue);
      laneContract(ctx, queue);
      dlqContract(ctx, queue);
    }

    describe('lifecycle', () => {
      test('ping answers', async () => {
        await ctx.store().ping();
      });

      test('the store reads time from the clock it was made with', async () => {
        const store = ctx.store();
        const clock = ctx.clock();
        assert.equal(store.clock.nowMs(), clock.nowMs());
        clock.advance(DAY_MS);
        assert.equal(store.clock.nowMs(), clock.nowMs());
      });

      test(`the store stays consistent and usable after ${MANY_OPERATIONS} mixed operations`, async () => {
        const store = ctx.store();
        const clock = ctx.clock();
        for (let i = 0; i < MANY_OPERATIONS; i += 1) {
          await store.enqueue('inbound', { id: `event-${i}`, payload: { i } });
          await store.registerToken(`pubkey-${i % 7}`, { token: `token-${i}`, transport: 'fcm' });
          await store.claimEvent(`event-${i}`, 60);
        }
        let acked = 0;
        for (;;) {
          const batch = await store.lease<{ i: number }>('inbound', { ...LEASE, max: 64 });
          if (batch.length === 0) break;
          for (const item of batch) {
            if (item.payload.i % 10 === 0) await store.deadLetter('inbound', item.id, item.leaseToken, 'every tenth');
            else if (await store.ack('inbound', item.id, item.leaseToken)) acked += 1;
          }
        }
        assert.equal(acked, MANY_OPERATIONS - MANY_OPERATIONS / 10);
        assert.deepEqual(totals(await store.queueStats('inbound')), { ready: 0, leased: 0, dead: MANY_OPERATIONS / 10 });
        assert.equal((await store.listDevices('pubkey-3')).length, Math.ceil((MANY_OPERATIONS - 3) / 7));
        assert.equal(await store.claimEvent('event-0', 60), false);

        // Two activity slices on: the refreshed tokens are at most one slice old, the rest two.
        clock.advance(2 * TOKEN_ACTIVITY_RESOLUTION_MS);
        assert.equal(await store.refreshTokenActivity(['token-0', 'token-1']), 2);
        assert.equal(await store.sweepStaleTokens(1.5 * TOKEN_ACTIVITY_RESOLUTION_MS), MANY_OPERATIONS - 2);
        await store.ping();
      });
    });
  });
}
