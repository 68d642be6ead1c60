/**
 * Live hints across a Redis fleet with its roles split (issue 13): the socket client is connected
 * to an `api` process, the like is counted by the `engine` of another process, and the hint
 * travels through Redis pub/sub. Also the admin announcement route on the api process: published
 * with the internal bearer token, counted in the user's inbox, marked seen by reading it.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { createApiKey } from '../../src/platform/api-keys.ts';
import type { StorePort } from '../../src/store/port.ts';
import { controlEvent, makeUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { openHintSocket, userApi } from '../support/user-api.ts';

const WAIT_MS = 20_000;

describe('inbox hints across a Redis fleet with split roles', () => {
  let relay: TestRelay;
  let fcm: FcmFake;
  let redis: PrivateRedisServer;
  let root: string;
  let reader: StorePort;
  let worker: ServiceProcess;
  let api: ServiceProcess;
  const serviceKey = makeUser();
  const alice = makeUser();
  const bob = makeUser();
  /** An admin API key of the default app: the announcement route's authentication. */
  let adminKey = '';

  before(async () => {
    [relay, fcm, redis] = await Promise.all([startTestRelay(), startFcmFake(), startRedisServer()]);
    root = mkdtempSync(join(tmpdir(), 'np-inbox-fleet-'));
    const common = (name: string): Record<string, string> => {
      const dataDir = join(root, name);
      mkdirSync(dataDir, { recursive: true });
      return {
        NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
        NOSTR_PUSH__NOSTR__RELAYS: relay.url,
        NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
        NOSTR_PUSH__STORE__URL: redis.url,
        NOSTR_PUSH__DATA_DIR: dataDir,
        NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
        NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
        NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
        NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
      };
    };
    [worker, api] = await Promise.all([
      startServiceProcess({
        env: { ...common('worker'), NOSTR_PUSH__ROLES: 'listener,engine,delivery,scheduler,janitor' },
        waitForHttp: false,
      }),
      startServiceProcess({ env: { ...common('api'), NOSTR_PUSH__ROLES: 'api' } }),
    ]);
    reader = await openRedisStore({ url: redis.url });
    adminKey = (await createApiKey(reader, 'default', 'admin')).key;
    await worker.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relay.url, WAIT_MS, 'worker live');
    await publish(relay.url, controlEvent(alice, REGISTER_TOKEN, { token: 'alice-iphone' }, serviceKey.pubkey));
    await eventually(async () => ((await reader.tokenOwner('alice-iphone')) === alice.pubkey ? true : undefined), WAIT_MS, 'registered');
  });

  // A failed before() leaves some of these unassigned: stop whatever was started.
  /* eslint-disable @typescript-eslint/no-unnecessary-condition */
  after(async () => {
    await Promise.all([worker?.stop(), api?.stop()]);
    await reader?.close();
    await Promise.all([relay?.stop(), fcm?.stop()]);
    await redis?.stop();
    rmSync(root, { recursive: true, force: true });
  });
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */

  test('a socket on the api process receives the hint of a like counted by the engine process', async () => {
    const socket = await openHintSocket(api.baseUrl, alice);
    const like = signEvent(
      {
        kind: REACTION,
        created_at: Math.floor(Date.now() / 1000),
        tags: [
          ['e', 'ae'.repeat(32)],
          ['a', `${VIDEO}:${alice.pubkey}:fleet-vine`],
          ['p', alice.pubkey],
          ['k', String(VIDEO)],
        ],
        content: '+',
      },
      bob.secret,
    );
    await publish(relay.url, like);
    await eventually(() => (socket.frames.length > 0 ? true : undefined), WAIT_MS, 'a hint on the api process');
    assert.deepEqual(socket.frames, [{ type: 'like', totalNew: 1 }]);
    socket.close();
    const counts = await userApi(api.baseUrl, alice, 'GET', '/v1/inbox/counts');
    assert.equal((counts.json as { totalNew: number }).totalNew, 1);
  });

  test('an admin announcement counts for the user until read; an admin API key guards it', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const refused = await fetch(`${api.baseUrl}/v1/admin/announcements`, {
      method: 'POST',
      headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Maintenance tonight', expiresAt }),
    });
    assert.equal(refused.status, 401);
    assert.equal(((await refused.json()) as { code: string }).code, 'UNAUTHORIZED');
    const published = await fetch(`${api.baseUrl}/v1/admin/announcements`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Maintenance tonight', expiresAt }),
    });
    assert.equal(published.status, 201);
    const announcement = (await published.json()) as { id: number; text: string; expiresAt: string };
    assert.equal(announcement.text, 'Maintenance tonight');
    assert.equal(announcement.expiresAt, expiresAt);

    const before = (await userApi(api.baseUrl, alice, 'GET', '/v1/inbox/counts')).json as { types: { announcement: { new: number } } };
    assert.equal(before.types.announcement.new, 1);
    const listed = (await userApi(api.baseUrl, alice, 'GET', '/v1/announcements')).json as { announcements: Array<{ id: number }> };
    assert.deepEqual(
      listed.announcements.map((a) => a.id),
      [announcement.id],
    );
    const after = (await userApi(api.baseUrl, alice, 'GET', '/v1/inbox/counts')).json as { types: { announcement: { new: number } } };
    assert.equal(after.types.announcement.new, 0);
  });
});
