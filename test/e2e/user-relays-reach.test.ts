/**
 * End to end for the users' relays a registration event alone does not reach (issue 36): the real
 * binary, two real relays, the FCM fake, nostr-tools-signed events and NIP-98 tokens, on each store.
 *
 * Relay A is the one configured; B is a read relay each user names only in their kind 10002,
 * published to A two days ago (older than the live subscription's first look back, so only a
 * lookup finds it).
 *
 * - erin registers only over HTTP (`PUT /v1/devices/{token}`): the registration asks A for her
 *   10002 as a 3079 would, B is watched for her, and a like published only to B pushes her;
 * - dave's device was stored directly in the store before the service started (a user from
 *   before user relays): the backfill looks him up after start, and a like only on B pushes him;
 * - frank has a device and no lists anywhere: the backfill marks him looked up.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REACTION, RELAY_LIST, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import type { StorePort } from '../../src/store/port.ts';
import { NO_RELAY_LIST_FOUND } from '../../src/store/port-user-relays.ts';
import { openStore } from '../../src/store/open.ts';
import type { StoreLocation } from '../../src/config/load.ts';
import { makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { userApi } from '../support/user-api.ts';

const now = () => Math.floor(Date.now() / 1000);
const TWO_DAYS_SECS = 2 * 86_400;
const WAIT_MS = 20_000;
const hasPubkeyFilter = (relay: TestRelay, pubkey: string): boolean =>
  relay.requests().some((request) => request.slice(1).some((filter) => ((filter as { '#p'?: string[] })['#p'] ?? []).includes(pubkey)));

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`users' relays reached without a registration event (${adapter})`, () => {
    let relayA: TestRelay;
    let relayB: TestRelay;
    let fcm: FcmFake;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let reader: StorePort;
    let service: ServiceProcess;
    const serviceKey = makeUser();
    const [bob, dave, erin, frank] = [makeUser(), makeUser(), makeUser(), makeUser()];
    let videoNumber = 0;

    const sign = (user: TestUser, kind: number, tags: string[][], content = '', createdAt = now()): NostrEvent =>
      signEvent({ kind, created_at: createdAt, tags, content }, user.secret);
    /** A like by bob of one of `owner`'s videos: pushed to the owner with the default preferences. */
    const likeOfVideo = (owner: TestUser): NostrEvent => {
      const id = (++videoNumber).toString(16).padStart(64, '0');
      return sign(
        bob,
        REACTION,
        [
          ['e', id],
          ['a', `${VIDEO}:${owner.pubkey}:reach-${videoNumber}`],
          ['p', owner.pubkey],
          ['k', String(VIDEO)],
        ],
        '+',
      );
    };
    const pushTo = (token: string, eventId: string) =>
      eventually(
        () => fcm.messages.find((m) => m.token === token && m.body.message.data.eventId === eventId)?.body.message.data,
        WAIT_MS,
        `a push to ${token} for ${eventId}`,
      );

    before(async () => {
      [relayA, relayB] = await Promise.all([startTestRelay(), startTestRelay()]);
      fcm = await startFcmFake();
      dataDir = mkdtempSync(join(tmpdir(), `np-user-relays-reach-${adapter}-`));
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      }
      const location: StoreLocation =
        adapter === 'redis' ? { kind: 'redis', url: storeUrl } : { kind: 'sqlite', path: join(dataDir, 'nostr-push.sqlite') };
      reader = await openStore(location);
      // Users from before: devices in the store, no relay lists.
      await reader.registerToken(dave.pubkey, { token: 'dave-phone', transport: 'fcm' });
      await reader.registerToken(frank.pubkey, { token: 'frank-phone', transport: 'fcm' });
      // dave's and erin's 10002 name B; they are on A only, and older than the live look back.
      await publish(
        relayA.url,
        sign(dave, RELAY_LIST, [['r', relayB.url]], '', now() - TWO_DAYS_SECS),
        sign(erin, RELAY_LIST, [['r', relayB.url]], '', now() - TWO_DAYS_SECS),
      );
      service = await startServiceProcess({
        env: {
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
          NOSTR_PUSH__NOSTR__RELAYS: relayA.url,
          NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
          NOSTR_PUSH__NOSTR__USER_RELAYS__ALLOW_LOOPBACK: 'I_UNDERSTAND',
          NOSTR_PUSH__NOSTR__USER_RELAYS__REFRESH_SECS: '0.2',
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
          NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
          NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
          NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
        },
      });
      await service.waitForLog((l) => l.msg === 'live subscriptions open', WAIT_MS, 'the live subscriptions');
    });

    after(async () => {
      /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
      await service?.stop();
      await reader?.close();
      await Promise.all([relayA?.stop(), relayB?.stop(), fcm?.stop()]);
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    });

    /** `user`'s stored 10002 names B only, B is watched for them, and a like published only on B reaches `token`. */
    async function likeOnlyOnBPushes(user: TestUser, token: string, listRead: string): Promise<void> {
      const read = await eventually(async () => (await reader.getUserRelayLists([user.pubkey]))[0]?.nip65?.relays, WAIT_MS, listRead);
      assert.deepEqual(read, [relayB.url]);
      await eventually(() => (hasPubkeyFilter(relayB, user.pubkey) ? true : undefined), WAIT_MS, `B watched for ${token}`);
      const like = likeOfVideo(user);
      await publish(relayB.url, like);
      assert.equal((await pushTo(token, like.id)).type, 'like');
    }

    test('a user registered only over HTTP has her 10002 fetched, B watched, and a like only on B pushes her', async () => {
      const put = await userApi(service.baseUrl, erin, 'PUT', '/v1/devices/erin-phone', {});
      assert.equal(put.status, 201);
      await likeOnlyOnBPushes(erin, 'erin-phone', "erin's 10002 fetched");
    });

    test('a device stored before start is looked up by the backfill, and a like only on B pushes him', async () => {
      await likeOnlyOnBPushes(dave, 'dave-phone', "dave's 10002 backfilled");
      assert.equal(relayB.connectionCount(), 1, 'one connection to B for both users');
    });

    test('a user without lists anywhere is marked looked up, and the walk has nobody left', async () => {
      const marked = await eventually(async () => (await reader.getUserRelayLists([frank.pubkey]))[0]?.nip65 ?? undefined, WAIT_MS);
      assert.deepEqual(marked, NO_RELAY_LIST_FOUND);
      const left: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { pubkeys: string[]; cursor: string | null } = await reader.usersWithoutRelayLists(cursor, 100);
        left.push(...page.pubkeys);
        cursor = page.cursor;
      } while (cursor !== null);
      assert.deepEqual(left, []);
    });
  });
}
