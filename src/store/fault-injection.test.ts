import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from './sqlite/index.ts';
import { InjectedStoreFault, storeFaultsFromEnv, TEST_STORE_FAULTS_ENV, withStoreFaults } from './fault-injection.ts';
import { ManualClock } from '../util/clock.ts';

describe('store fault injection (tests only)', () => {
  test('a faulted call is applied, then rejected; an unarmed or spared one is not', async () => {
    const store = await openSqliteStore({ path: ':memory:', clock: new ManualClock() });
    let armed = false;
    const faulty = withStoreFaults(store, 1, () => armed);
    assert.equal(await faulty.claimEvent('before-arming', 60), true, 'unarmed: untouched');
    armed = true;
    await assert.rejects(faulty.claimEvent('lost', 60), InjectedStoreFault);
    assert.equal(await store.claimEvent('lost', 60), false, 'the rejected call was applied');
    await assert.rejects(faulty.enqueue('inbound', { id: 'item', payload: 1 }), InjectedStoreFault);
    const [item] = await store.lease('inbound', { max: 1, leaseMs: 60_000, maxAttempts: 3 });
    assert.ok(item, 'the enqueue was applied');
    assert.equal(await faulty.ack('inbound', item.id, item.leaseToken), true, 'settlements are spared');
    assert.equal(withStoreFaults(store, 0, () => true).clock, store.clock, 'plain properties pass through');
    await store.close();
  });

  test('the environment variable: a fraction, only under NODE_ENV=test', () => {
    assert.equal(storeFaultsFromEnv({ NODE_ENV: 'test' }), undefined);
    assert.equal(storeFaultsFromEnv({ NODE_ENV: 'test', [TEST_STORE_FAULTS_ENV]: '0.25' }), 0.25);
    assert.throws(
      () => storeFaultsFromEnv({ NODE_ENV: 'production', [TEST_STORE_FAULTS_ENV]: '0.25' }),
      /only honoured with NODE_ENV=test/,
    );
    for (const bad of ['-0.1', '1.5', 'often'])
      assert.throws(() => storeFaultsFromEnv({ NODE_ENV: 'test', [TEST_STORE_FAULTS_ENV]: bad }), /fraction/);
  });
});
