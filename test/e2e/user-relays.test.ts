/**
 * End to end for users' own relays (issue 36): the real binary, three real relays, the FCM fake,
 * nostr-tools-signed events, on each store adapter.
 *
 * Relay A is the one configured; B is alice's read relay, known only from her kind 10002; C is her
 * kind 10050 DM relay. Her lists are published to A before she registers (the registration fetches
 * them from A), and followed live on A afterwards.
 *
 * - a like published only to B pushes alice once, and still once when it reaches A as well;
 * - a gift wrap only on C gives the content-free DM push (gift wraps on);
 * - after a new 10002 without B, B is no longer watched and a like there pushes nothing;
 * - a registration's `relays` are followed the same way;
 * - with `max_connections: 1` the relay covering the most users is the one kept.
 *
 * A push that must not happen is observed by a later push that must (published after it, to a relay
 * that delivers in order, for the same device), never by waiting.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DM_RELAY_LIST, GIFT_WRAP, PREFERENCES, REACTION, REGISTER_TOKEN, RELAY_LIST, TEXT_NOTE } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openStore } from '../../src/store/open.ts';
import type { StoreLocation } from '../../src/config/load.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startFcmFake, type FcmFake, type ReceivedMessage } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

const now = () => Math.floor(Date.now() / 1000);
const hasPubkeyFilter = (relay: TestRelay, pubkey: string): boolean =>
  relay.requests().some((request) => request.slice(1).some((filter) => ((filter as { '#p'?: string[] })['#p'] ?? []).includes(pubkey)));

async function metric(service: ServiceProcess, name: string): Promise<number> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  const match = new RegExp(`^${name} (\\d+)`, 'm').exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`users' relays end to end (${adapter})`, () => {
    let relayA: TestRelay;
    let relayB: TestRelay;
    let relayC: TestRelay;
    let fcm: FcmFake;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let storeUrl: string;
    let reader: StorePort;
    let service: ServiceProcess;
    const serviceKey = makeUser();
    const alice = makeUser();
    const bob = makeUser();
    const carol = makeUser();
    const dave = makeUser();

    const startService = async (extra: Record<string, string> = {}) =>
      startServiceProcess({
        env: {
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
          NOSTR_PUSH__NOSTR__RELAYS: relayA.url,
          NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
          NOSTR_PUSH__NOSTR__USER_RELAYS__ALLOW_LOOPBACK: 'I_UNDERSTAND',
          NOSTR_PUSH__NOSTR__USER_RELAYS__REFRESH_SECS: '0.2',
          NOSTR_PUSH__EVENTS__GIFT_WRAPS: 'true',
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
          NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
          NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
          NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
          ...extra,
        },
      });
    const messagesFor = (token: string, eventId: string): ReceivedMessage[] =>
      fcm.messages.filter((m) => m.token === token && m.body.message.data.eventId === eventId);
    const onePush = (token: string, eventId: string) =>
      eventually(() => messagesFor(token, eventId)[0]?.body.message.data, 15_000, `a push to ${token} for ${eventId}`);
    const sign = (user: TestUser, kind: number, tags: string[][], content = '', createdAt = now()): NostrEvent =>
      signEvent({ kind, created_at: createdAt, tags, content }, user.secret);
    /** A like of a fresh note of `owner`'s, so no two likes share a coalescing group. */
    const likeOf = (owner: TestUser): NostrEvent => {
      const note = sign(owner, TEXT_NOTE, [], `note ${Math.random()}`);
      return sign(
        bob,
        REACTION,
        [
          ['e', note.id],
          ['p', owner.pubkey],
          ['k', '1'],
        ],
        '+',
      );
    };
    const register = async (user: TestUser, token: string, extra: Record<string, unknown> = {}) => {
      await publish(relayA.url, controlEvent(user, REGISTER_TOKEN, { token, ...extra }, serviceKey.pubkey));
      await eventually(async () => ((await reader.tokenOwner(token)) === user.pubkey ? true : undefined), 15_000, `${token} registered`);
    };

    before(async () => {
      [relayA, relayB, relayC] = await Promise.all([startTestRelay(), startTestRelay(), startTestRelay()]);
      fcm = await startFcmFake();
      dataDir = mkdtempSync(join(tmpdir(), `np-user-relays-${adapter}-`));
      storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      }
      service = await startService();
      await service.waitForLog((l) => l.msg === 'live subscriptions open', 15_000, 'the live subscriptions');
      const location: StoreLocation =
        adapter === 'redis' ? { kind: 'redis', url: storeUrl } : { kind: 'sqlite', path: join(dataDir, 'nostr-push.sqlite') };
      reader = await openStore(location);
      // alice's lists are on A before she registers: the registration fetches them.
      await publish(
        relayA.url,
        sign(alice, RELAY_LIST, [
          ['r', relayB.url],
          ['r', 'ws://127.0.0.1:9/write-only', 'write'],
        ]),
        sign(alice, DM_RELAY_LIST, [['relay', relayC.url]]),
      );
      await register(alice, 'alice-phone');
      await publish(relayA.url, controlEvent(alice, PREFERENCES, { kinds: [7, 1111, 1059] }, serviceKey.pubkey));
      await eventually(async () => ((await reader.getPreferences(alice.pubkey))?.kinds.includes(1059) ? true : undefined));
    });

    after(async () => {
      /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
      await service?.stop();
      await reader?.close();
      await Promise.all([relayA?.stop(), relayB?.stop(), relayC?.stop(), fcm?.stop()]);
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    });

    test("the registration fetched alice's lists and her read and DM relays are watched with #p filters", async () => {
      const lists = await eventually(async () => {
        const [found] = await reader.getUserRelayLists([alice.pubkey]);
        return found?.nip65 && found.dm ? { read: found.nip65.relays, dm: found.dm.relays } : undefined;
      });
      assert.deepEqual(lists, { read: [relayB.url], dm: [relayC.url] });
      await eventually(() => (hasPubkeyFilter(relayB, alice.pubkey) && hasPubkeyFilter(relayC, alice.pubkey) ? true : undefined));
      // The DM relay is asked for gift wraps only.
      const onC = relayC.requests().filter((r) => ((r[1] as { '#p'?: string[] })['#p'] ?? []).includes(alice.pubkey));
      assert.ok(onC.every((r) => (r[1] as { kinds: number[] }).kinds.join() === String(GIFT_WRAP)));
      assert.equal(relayB.connectionCount(), 1, 'one connection to B');
    });

    test('a like published only to B pushes alice once, and still once when it reaches A too', async () => {
      await eventually(() => (hasPubkeyFilter(relayB, alice.pubkey) ? true : undefined));
      const like = likeOf(alice);
      await publish(relayB.url, like);
      assert.equal((await onePush('alice-phone', like.id)).type, 'like');
      await publish(relayA.url, like);
      const later = likeOf(alice);
      await publish(relayA.url, later);
      await onePush('alice-phone', later.id);
      assert.equal(messagesFor('alice-phone', like.id).length, 1);
    });

    test('a gift wrap only on the DM relay C gives the content-free DM push', async () => {
      await eventually(() => (hasPubkeyFilter(relayC, alice.pubkey) ? true : undefined));
      const wrap = sign(makeUser(), GIFT_WRAP, [['p', alice.pubkey]], 'ciphertext', now() - 3 * 3600);
      await publish(relayC.url, wrap);
      const data = await onePush('alice-phone', wrap.id);
      assert.equal(data.type, 'directMessage');
      assert.equal(data.senderPubkey, undefined, 'a wrap hides its sender');
    });

    test('after a new 10002 without B, B is no longer watched for alice and a like there pushes nothing', async () => {
      await publish(relayA.url, sign(alice, RELAY_LIST, [['r', relayC.url]], '', now() + 1));
      await eventually(async () =>
        (await reader.getUserRelayLists([alice.pubkey]))[0]?.nip65?.relays[0] === relayC.url ? true : undefined,
      );
      await eventually(() => (relayB.connectionCount() === 0 ? true : undefined), 15_000, 'B closed');
      const onB = likeOf(alice);
      const onC = likeOf(alice);
      await publish(relayB.url, onB);
      await publish(relayC.url, onC);
      await onePush('alice-phone', onC.id);
      assert.deepEqual(messagesFor('alice-phone', onB.id), []);
    });

    test("a registration's relays are followed the same way", async () => {
      await register(carol, 'carol-phone', { relays: [relayB.url] });
      await eventually(() => (hasPubkeyFilter(relayB, carol.pubkey) ? true : undefined), 15_000, 'B watched for carol');
      const like = likeOf(carol);
      await publish(relayB.url, like);
      assert.equal((await onePush('carol-phone', like.id)).type, 'like');
    });

    test('max_connections 1 keeps the relay covering the most users', async () => {
      // B: carol and dave (registration relays); C: alice alone.
      await register(dave, 'dave-phone', { relays: [relayB.url] });
      await service.stop();
      service = await startService({ NOSTR_PUSH__NOSTR__USER_RELAYS__MAX_CONNECTIONS: '1' });
      await eventually(
        () => (relayB.connectionCount() === 1 && relayC.connectionCount() === 0 ? true : undefined),
        15_000,
        'B kept, C dropped',
      );
      await eventually(async () => ((await metric(service, 'push_user_relays_dropped')) === 1 ? true : undefined));
      assert.equal(await metric(service, 'push_user_relays_watched'), 1);
      assert.equal(await metric(service, 'push_user_relay_users_uncovered'), 1, 'alice reads only from the dropped relay');
    });
  });
}

const SCALE_USERS = 1_000;
const SCALE_RELAYS = 50;
const POPULAR_RELAYS = 5;

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`users' relays at scale end to end (${adapter})`, () => {
    let configured: TestRelay;
    let relays: TestRelay[];
    let fcm: FcmFake;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let storeUrl: string;
    let service: ServiceProcess | undefined;
    const serviceKey = makeUser();

    const startService = (extra: Record<string, string> = {}) =>
      startServiceProcess({
        env: {
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
          NOSTR_PUSH__NOSTR__RELAYS: configured.url,
          NOSTR_PUSH__NOSTR__USER_RELAYS__ALLOW_LOOPBACK: 'I_UNDERSTAND',
          NOSTR_PUSH__NOSTR__USER_RELAYS__REFRESH_SECS: '0.5',
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
          NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
          NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
          ...extra,
        },
      });

    before(async () => {
      configured = await startTestRelay();
      relays = await Promise.all(Array.from({ length: SCALE_RELAYS }, () => startTestRelay()));
      fcm = await startFcmFake();
      dataDir = mkdtempSync(join(tmpdir(), `np-user-relays-scale-${adapter}-`));
      storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      }
      const location: StoreLocation =
        adapter === 'redis' ? { kind: 'redis', url: storeUrl } : { kind: 'sqlite', path: join(dataDir, 'nostr-push.sqlite') };
      // Every user reads from one of the 50 relays (20 each); the first half also from one of the
      // first five, which so cover about 110 users each.
      const writer = await openStore(location);
      for (let i = 0; i < SCALE_USERS; i++) {
        const pubkey = (i + 1).toString(16).padStart(64, '0');
        const named = [relays[i % SCALE_RELAYS]?.url ?? '', ...(i < SCALE_USERS / 2 ? [relays[i % POPULAR_RELAYS]?.url ?? ''] : [])];
        await writer.registerToken(pubkey, { token: `scale-${i}`, transport: 'fcm' });
        await writer.putUserRelayList(pubkey, { source: 'nip65', eventId: '00'.repeat(32), createdAt: 1, relays: [...new Set(named)] });
      }
      await writer.close();
    });

    after(async () => {
      /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
      await service?.stop();
      await Promise.all([configured?.stop(), ...(relays ?? []).map((relay) => relay.stop()), fcm?.stop()]);
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    });

    test('1,000 users over 50 relays: one connection per relay and one chunked REQ per relay, never one per user', async () => {
      service = await startService();
      await eventually(
        () => (relays.every((relay) => relay.connectionCount() === 1 && relay.requests().length >= 1) ? true : undefined),
        30_000,
        'every relay connected and subscribed',
      );
      // At most 250 pubkeys a filter: each relay's users (20 to ~110) fit one REQ.
      assert.deepEqual(
        relays.map((relay) => relay.requests().length),
        relays.map(() => 1),
      );
      const named = relays.flatMap((relay) => relay.requests().flatMap((request) => (request[1] as { '#p': string[] })['#p']));
      assert.equal(new Set(named).size, SCALE_USERS, 'every user is in some filter');
      assert.equal(await metric(service, 'push_user_relays_watched'), SCALE_RELAYS);
      await service.stop();
      service = undefined;
    });

    test('max_connections 5 keeps the 5 relays covering the most users', async () => {
      await eventually(() => (relays.every((relay) => relay.connectionCount() === 0) ? true : undefined), 15_000, 'the first run gone');
      service = await startService({ NOSTR_PUSH__NOSTR__USER_RELAYS__MAX_CONNECTIONS: String(POPULAR_RELAYS) });
      const popular = relays.slice(0, POPULAR_RELAYS);
      await eventually(() => (popular.every((relay) => relay.connectionCount() === 1) ? true : undefined), 30_000, 'the popular relays');
      await eventually(async () =>
        (await metric(service as ServiceProcess, 'push_user_relays_dropped')) === SCALE_RELAYS - POPULAR_RELAYS ? true : undefined,
      );
      assert.deepEqual(
        relays.slice(POPULAR_RELAYS).filter((relay) => relay.connectionCount() > 0),
        [],
      );
    });
  });
}
