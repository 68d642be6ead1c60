import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metrics } from '../observability/metrics.ts';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { ManualClock } from '../util/clock.ts';
import { EXPIRY_BATCH_SIZE, expireNtfyMessagesOnce } from './janitor.ts';

test('one janitor pass deletes every expired message, batch after batch, and counts them', async () => {
  const clock = new ManualClock();
  const store = await openSqliteStore({ path: ':memory:', clock });
  const metrics = new Metrics();
  try {
    const expiring = EXPIRY_BATCH_SIZE * 2 + 7;
    for (let i = 0; i < expiring; i++) await store.appendNtfyMessage(`t${i % 5}`, { message: `m${i}` }, 1_000);
    const kept = await store.appendNtfyMessage('t0', { message: 'kept' }, 60_000);
    clock.advance(1_000);
    assert.equal(await expireNtfyMessagesOnce(store, metrics), expiring);
    assert.equal((await metrics.ntfyExpired.get()).values[0]?.value, expiring);
    assert.equal(await expireNtfyMessagesOnce(store, metrics), 0);
    assert.deepEqual(
      (await store.readNtfyMessages(['t0'], null, 10)).messages.map((m) => m.id),
      [kept.id],
    );
  } finally {
    await store.close();
  }
});
