/**
 * Issue 42: a store step that was applied and still reported failed costs a retry (a repeat at
 * most), never a notification. The real binary runs with two test fault injectors, honoured only
 * under `NODE_ENV=test`:
 *
 * - `NOSTR_PUSH_TEST_REPLICA_REFUSAL` (Redis): a share of the steps' `WAIT`s turn into
 *   `ReplicationWaitError`s after the writes were made, as replica acknowledgements that time
 *   out do: the listener's enqueues, the engine's claims and queue hand-offs, the scheduler's
 *   fan-out pages;
 * - `NOSTR_PUSH_TEST_STORE_FAULTS` (every store): a share of all store calls are applied and
 *   then rejected, as after a lost answer (`store/fault-injection.ts`; queue settlements are
 *   spared, whose lost answer is a repeat by design).
 *
 * A stream of registrations, notify lists, likes, comments and a bell flows meanwhile, and every
 * expected push arrives at least once and at most twice. Run on SQLite (lost answers only), on one
 * Redis with `redis.wait_replicas: 1` and on a Redis Cluster of three masters with a replica each.
 * Leases are short and attempts many: a lease whose answer is lost holds its items until it
 * expires, and no item may reach the dead letters for a run of bad luck.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMENT, PEOPLE_LIST, REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { TEST_REPLICA_REFUSAL_ENV } from '../../src/store/redis/replication.ts';
import { TEST_STORE_FAULTS_ENV } from '../../src/store/fault-injection.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startRedisCluster, type PrivateRedisCluster } from '../support/redis-cluster.ts';
import { startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

/**
 * How often acknowledgements are refused and answers lost: every kind of step meets several in
 * one run (a like on the cluster layout takes ~8 steps and 3 WAITs), while one attempt at an
 * item still succeeds ~4 times in 5, so no item needs the 8 failed attempts in a row (~4 minutes of
 * backoff) that would outlast {@link WAIT_MS}.
 */
const REFUSAL_FRACTION = '0.05';
const STORE_FAULT_FRACTION = '0.02';
const CREATORS = 24;
const LIKED = 8;
const WATCHERS = 6;
/** Upper bound only a hang reaches (or an item retried 8 times in a row, backing off 1 s, 2 s, … 2 min). */
const WAIT_MS = 240_000;

const now = () => Math.floor(Date.now() / 1000);

const LAYOUTS = {
  sqlite: 'SQLite: lost answers',
  redis: 'one Redis, wait_replicas 1: refused acknowledgements and lost answers',
  cluster: 'Redis Cluster with replicas: refused acknowledgements and lost answers',
} as const;

for (const layout of ['sqlite', 'redis', 'cluster'] as const) {
  describe(`store steps applied and reported failed at random (${LAYOUTS[layout]})`, () => {
    let relay: TestRelay;
    let fcm: FcmFake;
    let redis: PrivateRedisServer | undefined;
    let cluster: PrivateRedisCluster | undefined;
    let dataDir: string;
    let reader: StorePort;
    let service: ServiceProcess;
    const serviceKey = makeUser();
    const fan = makeUser();
    const creators = Array.from({ length: CREATORS }, () => makeUser());
    /** The creator every watcher bells: the first one. */
    const belled = creators[0] ?? makeUser();
    const watchers = Array.from({ length: WATCHERS }, () => makeUser());
    const tokenOf = (user: TestUser) => `phone-${user.pubkey.slice(0, 16)}`;
    const sign = (user: TestUser, kind: number, tags: string[][], content = '') =>
      signEvent({ kind, created_at: now(), tags, content }, user.secret);
    const videoOf = (creator: TestUser, d: string): NostrEvent =>
      sign(creator, VIDEO, [
        ['d', d],
        ['title', d],
      ]);
    const pushesOf = (token: string, eventId: string) =>
      fcm.messages.filter((m) => m.token === token && m.body.message.data.eventId === eventId).length;

    before(async () => {
      relay = await startTestRelay();
      fcm = await startFcmFake();
      dataDir = mkdtempSync(join(tmpdir(), `np-replica-refusals-${layout}-`));
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (layout === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      } else if (layout === 'cluster') {
        cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
        storeUrl = cluster.url;
      }
      service = await startServiceProcess({
        env: {
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
          NOSTR_PUSH__NOSTR__RELAYS: relay.url,
          NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__REDIS__WAIT_REPLICAS: '1',
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
          // A lease whose answer is lost holds its items (a fan-out page) until it expires: short,
          // so they return within seconds; and attempts enough that no item reaches the dead letters.
          NOSTR_PUSH__QUEUE__LEASE_SECS: '2',
          NOSTR_PUSH__SERVICE__NEW_POST_FANOUT_LEASE_SECS: '2',
          NOSTR_PUSH__QUEUE__MAX_ATTEMPTS: '40',
          NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
          NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
          NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
          [TEST_STORE_FAULTS_ENV]: STORE_FAULT_FRACTION,
          ...(layout === 'sqlite' ? {} : { [TEST_REPLICA_REFUSAL_ENV]: REFUSAL_FRACTION }),
        },
      });
      reader =
        layout === 'sqlite' ? await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') }) : await openRedisStore({ url: storeUrl });
      await service.waitForLog((l) => l.msg === 'live subscriptions open', WAIT_MS, 'relay live');
      for (const user of [...creators, ...watchers])
        await publish(relay.url, controlEvent(user, REGISTER_TOKEN, { token: tokenOf(user) }, serviceKey.pubkey));
      for (const user of [...creators, ...watchers])
        await eventually(
          async () => ((await reader.tokenOwner(tokenOf(user))) === user.pubkey ? true : undefined),
          WAIT_MS,
          `${tokenOf(user)} registered`,
        );
      // Every watcher bells the first creator.
      for (const watcher of watchers)
        await publish(
          relay.url,
          sign(watcher, PEOPLE_LIST, [
            ['d', 'notify'],
            ['title', 'Notify'],
            ['p', belled.pubkey],
          ]),
        );
      for (const watcher of watchers)
        await eventually(
          async () => ((await reader.notifySubscriptions(watcher.pubkey)).length === 1 ? true : undefined),
          WAIT_MS,
          'bell stored',
        );
    });

    after(async () => {
      /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
      await service?.stop();
      await reader?.close();
      await Promise.all([relay?.stop(), fcm?.stop()]);
      await redis?.stop();
      await cluster?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    });

    test('likes, comments and bells in a stream: each push arrives at least once and at most twice; the retries are logged', async () => {
      const posts = creators.map((creator, i) => ({
        creator,
        video: videoOf(creator, `video-${i}`),
        address: `${VIDEO}:${creator.pubkey}:video-${i}`,
      }));
      await publish(relay.url, ...posts.map((post) => post.video));
      const belledVideo = posts.find((post) => post.creator === belled)?.video.id ?? '';
      const expected: Array<{ token: string; eventId: string; what: string }> = [];
      for (const watcher of watchers) expected.push({ token: tokenOf(watcher), eventId: belledVideo, what: 'bell' });
      const stream: NostrEvent[] = [];
      for (const [i, { creator, video, address }] of posts.entries()) {
        const event =
          i < LIKED
            ? sign(
                fan,
                REACTION,
                [
                  ['e', video.id],
                  ['a', address],
                  ['p', creator.pubkey],
                  ['k', String(VIDEO)],
                ],
                '+',
              )
            : sign(
                fan,
                COMMENT,
                [
                  ['A', address],
                  ['E', video.id],
                  ['K', String(VIDEO)],
                  ['P', creator.pubkey],
                  ['e', video.id],
                  ['k', String(VIDEO)],
                  ['p', creator.pubkey],
                ],
                `nice ${i}`,
              );
        stream.push(event);
        expected.push({ token: tokenOf(creator), eventId: event.id, what: `${i < LIKED ? 'like' : 'comment'} ${i}` });
      }
      for (const event of stream) await publish(relay.url, event);
      await eventually(
        () => (expected.every(({ token, eventId }) => pushesOf(token, eventId) > 0) ? true : undefined),
        WAIT_MS,
        'every expected push',
      ).catch((error: unknown) => {
        const missing = expected.filter(({ token, eventId }) => pushesOf(token, eventId) === 0).map((e) => e.what);
        throw new Error(`${(error as Error).message}; missing: ${missing.join(', ')}`);
      });
      for (const { token, eventId, what } of expected)
        assert.ok(pushesOf(token, eventId) <= 2, `${what} (${eventId}): at most twice, got ${pushesOf(token, eventId)}`);
      // The log says what was retried: each fault kind injected shows as a retried step.
      const retried = (pattern: RegExp) =>
        service.logs.some((l) => l.level >= 40 && pattern.test(typeof l.err === 'string' ? l.err : JSON.stringify(l.err ?? '')));
      assert.ok(retried(/injected store fault: \w+ was applied, its answer lost/), 'lost answers are logged with the step');
      if (layout !== 'sqlite') assert.ok(retried(/ReplicationWaitError|replicas acknowledged/), 'refused acknowledgements are logged');
    });
  });
}
