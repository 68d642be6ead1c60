/**
 * Tenancy on Redis, key by key: the default app keeps seed 000's layout exactly (no prefix, so a
 * divine Redis is a drop-in), and another app's view writes only under `app:{id}:`. A private
 * redis-server with no test prefix, so the raw key names are the deployment's.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import { openStore } from '../../src/store/open.ts';
import type { StorePort } from '../../src/store/port.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

const ALICE = 'a1'.repeat(32);
const EVENT = 'e1'.repeat(32);

let server: PrivateRedisServer | undefined;
before(async () => {
  server = await startRedisServer();
});
after(async () => {
  await server?.stop();
});

async function writeOneOfEach(store: StorePort): Promise<void> {
  await store.registerToken(ALICE, { token: 'tok-1', transport: 'fcm' });
  await store.setPreferences(ALICE, { kinds: [7], campaignsEnabled: false });
  await store.claimEvent(EVENT, 60);
  await store.enqueue('outbound', { id: 'item-1', payload: {} });
}

test('the default app writes seed 000’s key names; app b writes the same names under app:b:, and nothing else', async () => {
  if (!server) throw new Error('redis-server did not start');
  const location = { kind: 'redis', url: server.url } as const;
  const raw = new Redis(server.url);
  const clock = new ManualClock();
  const [defaultView, appView] = await Promise.all([openStore(location, { clock }), openStore(location, { clock, app: 'b' })]);
  try {
    await writeOneOfEach(defaultView);
    const defaultKeys = (await raw.keys('*')).sort();
    for (const key of [
      `user_tokens:${ALICE}`,
      'token_to_pubkey',
      'stale_tokens',
      `user_preferences:${ALICE}`,
      `dedup:${EVENT}`,
      'queue:outbound:ready',
      'queue:outbound:items',
    ])
      assert.ok(defaultKeys.includes(key), `default key ${key} in ${defaultKeys.join(', ')}`);
    assert.ok(!defaultKeys.some((key) => key.startsWith('app:')), 'the default layout has no app: key');

    await writeOneOfEach(appView);
    const appKeys = (await raw.keys('*')).filter((key) => !defaultKeys.includes(key)).sort();
    assert.deepEqual(appKeys, defaultKeys.map((key) => `app:b:${key}`).sort(), 'the same layout, prefixed');
  } finally {
    await Promise.all([defaultView.close(), appView.close(), raw.quit()]);
  }
});
