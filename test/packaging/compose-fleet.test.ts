/**
 * The fleet compose.yaml describes, run as compose would run it but without containers: one real
 * binary per service replica, each with that service's environment (compose's variables filled
 * in), on one private Redis. What the test changes, and why: the store URL (compose's `redis`
 * host exists only on compose's network; the private server takes its place), the data directory
 * and HTTP port of each process (they share a machine here), and FCM pointed at the HTTP/2 fake
 * (compose leaves FCM to the operator). A like published to a relay then crosses the split roles:
 * the listener reads it, a worker's engine routes it and a worker's delivery pushes it, once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import type { StorePort } from '../../src/store/port.ts';
import { startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { controlEvent, makeUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { interpolate, nostrPushServices, readCompose, rolesOf } from './compose-file.ts';

interface FleetProcess {
  service: string;
  roles: string[];
  process: ServiceProcess;
}

describe('the compose fleet, one real process per service replica on Redis', () => {
  let relay: TestRelay;
  let fcm: FcmFake;
  let redis: PrivateRedisServer;
  let reader: StorePort;
  let dataRoot: string;
  const fleet: FleetProcess[] = [];
  const serviceKey = makeUser();
  const alice = makeUser();
  const bob = makeUser();

  before(async () => {
    [relay, fcm, redis] = await Promise.all([startTestRelay(), startFcmFake(), startRedisServer()]);
    dataRoot = mkdtempSync(join(tmpdir(), 'np-compose-fleet-'));
    reader = await openRedisStore({ url: redis.url });
    const vars = { NOSTR_PUSH_SERVICE_KEY: serviceKey.secret, NOSTR_PUSH_RELAYS: relay.url };
    const credentials = fcm.writeCredentials(dataRoot);
    for (const [name, service, rawEnv] of nostrPushServices(readCompose())) {
      const composeEnv = Object.fromEntries(Object.entries(rawEnv).map(([key, value]) => [key, interpolate(value, vars)]));
      const roles = rolesOf(composeEnv);
      const servesHttp = roles.includes('api') || roles.includes('pusher');
      for (let replica = 0; replica < (service.deploy?.replicas ?? 1); replica++) {
        const dataDir = mkdtempSync(join(dataRoot, `${name}-`));
        const env = {
          ...composeEnv,
          NOSTR_PUSH__STORE__URL: redis.url,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: credentials,
          NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
          NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
        };
        const process = await startServiceProcess({ env, waitForHttp: servesHttp });
        if (!servesHttp) await process.waitForLog((l) => l.msg === 'store open', 20_000, `${name} to open the store`);
        fleet.push({ service: name, roles, process });
      }
    }
    const listener = fleet.find((p) => p.roles.includes('listener')) ?? assert.fail('a listener process');
    await listener.process.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relay.url, 20_000, 'the relay live');
  });

  after(async () => {
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
    await Promise.all(fleet.map((p) => p.process.stop()));
    await reader?.close();
    await Promise.all([relay?.stop(), fcm?.stop(), redis?.stop()]);
    if (dataRoot) rmSync(dataRoot, { recursive: true, force: true });
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  });

  test('every process runs only its roles, and the api process reports every critical task it runs healthy', async () => {
    for (const { service, roles, process } of fleet) {
      const loaded = process.logs.find((l) => l.msg === 'configuration loaded') ?? assert.fail(`${service} logged its configuration`);
      assert.deepEqual(loaded.roles, roles, service);
      assert.equal(process.child.exitCode, null, `${service} is running`);
    }
    const api = fleet.find((p) => p.roles.includes('api')) ?? assert.fail('an api process');
    const health = (await (await fetch(`${api.process.baseUrl}/health`)).json()) as {
      status: string;
      pubkey: string;
      tasks: Record<string, boolean>;
    };
    assert.equal(health.status, 'ok');
    assert.equal(health.pubkey, serviceKey.pubkey, 'the fleet runs on the service key compose passes in');
    // The scheduler's and the janitor's critical tasks are watched by this process's /health.
    assert.ok(Object.keys(health.tasks).length > 0);
    assert.ok(Object.values(health.tasks).every(Boolean), JSON.stringify(health.tasks));
  });

  test('a registration and a like cross the split roles (listener, then engine and delivery in the workers): one push', async () => {
    await publish(relay.url, controlEvent(alice, REGISTER_TOKEN, { token: 'alice-phone' }, serviceKey.pubkey));
    await eventually(
      async () => ((await reader.tokenOwner('alice-phone')) === alice.pubkey ? true : undefined),
      20_000,
      'the registration',
    );
    const like = signEvent(
      {
        kind: REACTION,
        created_at: Math.floor(Date.now() / 1000),
        tags: [
          ['e', 'ab'.repeat(32)],
          ['a', `${VIDEO}:${alice.pubkey}:my-vine`],
          ['p', alice.pubkey],
          ['k', String(VIDEO)],
        ],
        content: '+',
      },
      bob.secret,
    );
    await publish(relay.url, like);
    const pushes = () => fcm.messages.filter((m) => m.token === 'alice-phone' && m.body.message.data.eventId === like.id);
    await eventually(() => (pushes().length > 0 ? true : undefined), 20_000, 'the push of the like');
    assert.equal(pushes().length, 1);
    assert.equal(pushes()[0]?.body.message.data.type, 'like');
  });
});
