import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import { openSqliteStore } from '../store/sqlite/index.ts';
import type { StorePort } from '../store/port.ts';
import { ManualClock } from '../util/clock.ts';
import { STORAGE_EXPIRY_PAGE_SIZE, expireIdleStorage, runStorageExpiry, type StorageExpiryDeps } from './storage-expiry.ts';

const DAY_MS = 86_400_000;
const pubkey = (i: number) => i.toString(16).padStart(64, '0');

describe('storage expiry (janitor)', () => {
  let clock: ManualClock;
  let store: StorePort;
  let deps: StorageExpiryDeps;
  let metrics: Metrics;

  beforeEach(async () => {
    clock = new ManualClock();
    store = await openSqliteStore({ path: ':memory:', clock });
    metrics = new Metrics();
    deps = {
      store,
      idleUserTtlDays: 30,
      idleCallbackTtlDays: 90,
      intervalMs: 3_600_000,
      metrics,
      logger: createLogger({ level: 'silent' }),
    };
  });
  afterEach(() => store.close());

  test('one pass forgets every idle user, past one page, and every idle callback URL; the active stay', async () => {
    const idleUsers = STORAGE_EXPIRY_PAGE_SIZE + 3;
    for (let i = 0; i < idleUsers; i += 1) await store.rememberInboxUser(pubkey(i));
    await store.createNip9aCallback({
      id: 'cb-idle',
      secretHash: 'ab'.repeat(32),
      secretHint: 'ab',
      owner: pubkey(0),
      relay: 'wss://relay.example/',
      createdAtMs: clock.nowMs(),
    });
    clock.advance(29 * DAY_MS);
    await store.rememberInboxUser(pubkey(idleUsers));
    clock.advance(2 * DAY_MS);
    assert.deepEqual(await expireIdleStorage(deps), { inboxUsers: idleUsers, callbacks: 0 }, 'the callback is idle for 31 days only');
    clock.advance(60 * DAY_MS);
    assert.deepEqual(await expireIdleStorage(deps), { inboxUsers: 1, callbacks: 1 });
    assert.deepEqual(await store.listNip9aCallbacks(pubkey(0)), []);
  });

  test('an app other than the default sweeps its users only; the task counts what it removed', async () => {
    await store.rememberInboxUser(pubkey(1));
    await store.createNip9aCallback({
      id: 'cb-idle',
      secretHash: 'cd'.repeat(32),
      secretHint: 'cd',
      owner: pubkey(1),
      relay: 'wss://relay.example/',
      createdAtMs: clock.nowMs(),
    });
    clock.advance(100 * DAY_MS);
    const controller = new AbortController();
    const running = runStorageExpiry({ ...deps, idleCallbackTtlDays: null }, controller.signal);
    // The first pass runs at once; the abort ends the wait for the next.
    while (!(await metrics.registry.metrics()).includes('push_storage_expired_total{kind="inbox_user"} 1'))
      await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await running;
    assert.equal((await store.listNip9aCallbacks(pubkey(1))).length, 1);
  });
});
