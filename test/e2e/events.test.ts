/**
 * End to end for issue 21's optional kinds: the real binary, a real relay, the FCM fake,
 * nostr-tools-signed events, on each store adapter.
 *
 * First the service runs with the default configuration: it does not even ask the relay for kind
 * 1, 9735 or 1059, and a kind-1 reply pushes nothing. Then it runs again, on the same store, with
 * two apps: the default app keeps divine's events, app `b` (the users' service key) has
 * {@link EVENTS_ENABLED}: a reply, a mention, a valid zap and a gift wrap each push once with
 * their type; an invalid zap pushes nothing; three wraps within the DM interval push once.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { npubEncode } from 'nostr-tools/nip19';
import { COMMENT, GIFT_WRAP, METADATA, PREFERENCES, REGISTER_TOKEN, TEXT_NOTE, ZAP_RECEIPT, ZAP_REQUEST } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openStore } from '../../src/store/open.ts';
import type { StoreLocation } from '../../src/config/load.ts';
import { LIVE_EVENTS_SUBSCRIPTION_ID, LIVE_GIFT_WRAPS_SUBSCRIPTION_ID } from '../../src/listener/subscriptions.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startFcmFake, type FcmFake, type ReceivedMessage } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

/**
 * The `events:` settings under test, as one object: the settings of a second app (`b`), beside a
 * default app that keeps divine's events. Zaps must be verified: the recipient's lnurl-pay
 * endpoint is a loopback HTTP server of this test (`lnurl_allow_loopback`, test suites only).
 */
const EVENTS_ENABLED = {
  text_notes: true,
  zaps: true,
  zaps_allow_unverified: false,
  gift_wraps: true,
  dm_push_min_interval_secs: 60,
  lnurl_allow_loopback: true,
};

/** A LUD-16 lnurl-pay endpoint on loopback: `/.well-known/lnurlp/<name>` answers with `providers[name]`. */
async function startLnurlServer(providers: Record<string, string>): Promise<{ port: number; stop(): Promise<void> }> {
  const server = createServer((req, res) => {
    const name = /^\/\.well-known\/lnurlp\/([a-z0-9]+)$/.exec(req.url ?? '')?.[1];
    const nostrPubkey = name === undefined ? undefined : providers[name];
    if (nostrPubkey === undefined) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ tag: 'payRequest', callback: 'http://127.0.0.1/cb', allowsNostr: true, nostrPubkey }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** BOLT-11's example invoice of 2500 µBTC (250,000 sats). */
const SPEC_INVOICE_2500U =
  'lnbc2500u1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5xysxxatsyp3k7enxv4jsxqzpu9qrsgquk0rl77nj30yxdy8j9vdx85fkpmdla2087ne0xh8nhedh8w27kyke0lp53ut353s06fv3qfegext0eh0ymjpf39tuven09sam30g4vgpfna3rh';

const now = () => Math.floor(Date.now() / 1000);

async function metric(service: ServiceProcess, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  const match = pattern.exec(text);
  return match ? Number(match[1]) : 0;
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`optional event kinds end to end (${adapter})`, () => {
    let relay: TestRelay;
    let fcm: FcmFake;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let storeUrl: string;
    let reader: StorePort;
    let location: StoreLocation;
    let service: ServiceProcess;
    let lnurl: { port: number; stop(): Promise<void> };
    const serviceKey = makeUser();
    const alice = makeUser();
    const bob = makeUser();
    const carol = makeUser();
    const provider = makeUser();

    const baseEnv = (): Record<string, string> => ({
      NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
      NOSTR_PUSH__NOSTR__RELAYS: relay.url,
      NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
      NOSTR_PUSH__STORE__URL: storeUrl,
      NOSTR_PUSH__DATA_DIR: dataDir,
      NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
      NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
      NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
      NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
    });
    const startService = async (env: Record<string, string>) => {
      const started = await startServiceProcess({ env: { ...baseEnv(), ...env } });
      await started.waitForLog((l) => l.msg === 'live subscriptions open', 15_000, 'the live subscriptions');
      return started;
    };
    const messagesFor = (token: string, eventId?: string): ReceivedMessage[] =>
      fcm.messages.filter((m) => m.token === token && (eventId === undefined || m.body.message.data.eventId === eventId));
    const oneMessage = (token: string, eventId: string) =>
      eventually(
        () => (messagesFor(token, eventId).length > 0 ? messagesFor(token, eventId)[0]?.body.message.data : undefined),
        15_000,
        `a push to ${token} for ${eventId}`,
      );
    const sign = (user: TestUser, kind: number, tags: string[][], content = '', createdAt = now()) =>
      signEvent({ kind, created_at: createdAt, tags, content }, user.secret);
    const recipientsCounted = (type: string, outcome: string) =>
      metric(service, new RegExp(`push_content_recipients_total\\{type="${type}",outcome="${outcome}"\\} (\\d+)`));

    before(async () => {
      relay = await startTestRelay();
      fcm = await startFcmFake();
      lnurl = await startLnurlServer({ alice: provider.pubkey });
      dataDir = mkdtempSync(join(tmpdir(), `np-events-${adapter}-`));
      storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      }
      service = await startService({});
      location = adapter === 'redis' ? { kind: 'redis', url: storeUrl } : { kind: 'sqlite', path: join(dataDir, 'nostr-push.sqlite') };
      reader = await openStore(location);
      await publish(relay.url, sign(bob, METADATA, [], JSON.stringify({ name: 'bob', display_name: 'Bob' })));
      await publish(relay.url, sign(alice, METADATA, [], JSON.stringify({ name: 'alice', lud16: `alice@127.0.0.1:${lnurl.port}` })));
      // alice opts in to replies and mentions (1), zaps (9735) and private-message pushes (1059);
      // carol keeps the defaults (1 among them, 9735 and an explicit 1059 not).
      for (const [user, token] of [
        [alice, 'alice-phone'],
        [carol, 'carol-phone'],
      ] as const) {
        await publish(relay.url, controlEvent(user, REGISTER_TOKEN, { token }, serviceKey.pubkey));
        await eventually(async () => ((await reader.tokenOwner(token)) === user.pubkey ? true : undefined), 15_000, `${token} registered`);
      }
      await publish(relay.url, controlEvent(alice, PREFERENCES, { kinds: [1, 7, 1111, 9735, 1059] }, serviceKey.pubkey));
      await eventually(async () => ((await reader.getPreferences(alice.pubkey))?.kinds.includes(9735) ? true : undefined));
    });

    after(async () => {
      /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
      await service?.stop();
      await reader?.close();
      await Promise.all([relay?.stop(), fcm?.stop(), lnurl?.stop()]);
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    });

    test('default configuration: the relay is asked for divine kinds only, and a kind-1 reply pushes nothing', async () => {
      const live = relay.requests().filter((r) => r[0] === LIVE_EVENTS_SUBSCRIPTION_ID);
      assert.ok(live.length > 0);
      for (const request of live)
        assert.deepEqual((request[1] as { kinds: number[] }).kinds, [7, 16, 1111, 3079, 3080, 3083, 30023, 34236]);
      assert.equal(relay.requests().filter((r) => r[0] === LIVE_GIFT_WRAPS_SUBSCRIPTION_ID).length, 0);

      const note = sign(alice, TEXT_NOTE, [], 'my note');
      const reply = sign(
        bob,
        TEXT_NOTE,
        [
          ['e', note.id, '', 'root', alice.pubkey],
          ['p', alice.pubkey],
        ],
        'a reply',
      );
      const comment = sign(
        bob,
        COMMENT,
        [
          ['E', note.id],
          ['K', '1'],
          ['P', alice.pubkey],
          ['e', note.id],
          ['k', '1'],
          ['p', alice.pubkey],
        ],
        'a comment',
      );
      await publish(relay.url, note, reply, comment);
      // The comment, published after the reply, arrives: the reply was never going to.
      assert.equal((await oneMessage('alice-phone', comment.id)).type, 'comment');
      assert.deepEqual(messagesFor('alice-phone', reply.id), []);
      await service.stop();
    });

    describe('with the events settings on in a second app', () => {
      // The default app (a key of its own, divine's events only) beside app `b`, which owns
      // `serviceKey` now and turns every optional kind on in its own `events:` settings.
      const defaultAppKey = makeUser();
      before(async () => {
        const configFile = join(dataDir, 'two-apps.yaml');
        writeFileSync(
          configFile,
          `service:\n  private_key_hex: "${defaultAppKey.secret}"\napps:\n  - id: b\n    service:\n      private_key_hex: "${serviceKey.secret}"\n    events: ${JSON.stringify(EVENTS_ENABLED)}\n`,
        );
        const { NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: _defaultKey, ...env } = baseEnv();
        service = await startServiceProcess({ env, args: ['--config', configFile] });
        await service.waitForLog((l) => l.msg === 'live subscriptions open' && l.app === 'b', 15_000, "app b's live subscriptions");
        await eventually(() => (relay.requests().some((r) => r[0] === LIVE_GIFT_WRAPS_SUBSCRIPTION_ID) ? true : undefined));
        // App b's devices and preferences live in its own store view: registered to it afresh.
        await reader.close();
        reader = await openStore(location, { app: 'b' });
        for (const [user, token] of [
          [alice, 'alice-phone'],
          [carol, 'carol-phone'],
        ] as const) {
          await publish(relay.url, controlEvent(user, REGISTER_TOKEN, { token }, serviceKey.pubkey));
          await eventually(
            async () => ((await reader.tokenOwner(token)) === user.pubkey ? true : undefined),
            15_000,
            `${token} registered to b`,
          );
        }
        await publish(relay.url, controlEvent(alice, PREFERENCES, { kinds: [1, 7, 1111, 9735, 1059] }, serviceKey.pubkey));
        await eventually(async () => ((await reader.getPreferences(alice.pubkey))?.kinds.includes(9735) ? true : undefined));
      });

      test('the default app keeps its events off while app b turns them on', async () => {
        const defaultApp = await fetch(`${service.baseUrl}/health`).then((r) => r.json() as Promise<{ pubkey: string }>);
        assert.equal(defaultApp.pubkey, defaultAppKey.pubkey);
        const kindsAsked = relay
          .requests()
          .filter((r) => r[0] === LIVE_EVENTS_SUBSCRIPTION_ID)
          .map((r) => (r[1] as { kinds: number[] }).kinds.join(','));
        assert.ok(kindsAsked.includes([7, 16, 1111, 3079, 3080, 3083, 30023, 34236].join(',')), 'the default app asks for divine kinds');
      });

      test('the relay is asked for kinds 1 and 9735, and for gift wraps in a REQ of their own', () => {
        const live = relay.requests().filter((r) => r[0] === LIVE_EVENTS_SUBSCRIPTION_ID);
        const kindsAsked = live.map((r) => (r[1] as { kinds: number[] }).kinds.join(','));
        assert.ok(kindsAsked.includes([1, 7, 16, 1111, 3079, 3080, 3083, 9735, 30023, 34236].join(',')), kindsAsked.join(' | '));
        const wraps = relay.requests().filter((r) => r[0] === LIVE_GIFT_WRAPS_SUBSCRIPTION_ID);
        assert.deepEqual((wraps[0]?.[1] as { kinds: number[] }).kinds, [GIFT_WRAP]);
      });

      test('a reply (its parent found on the relay, no pubkey hint) pushes once, as a reply', async () => {
        const note = sign(alice, TEXT_NOTE, [], 'what do you think?');
        await publish(relay.url, note);
        const reply = sign(
          bob,
          TEXT_NOTE,
          [
            ['e', note.id, relay.url, 'root'],
            ['p', alice.pubkey],
          ],
          'I agree',
        );
        await publish(relay.url, reply);
        const data = await oneMessage('alice-phone', reply.id);
        assert.equal(data.type, 'reply');
        assert.equal(data.title, 'Bob replied');
        assert.equal(data.body, 'I agree');
        assert.equal(data.senderPubkey, bob.pubkey);
        assert.equal(data.eventKind, '1');
        assert.equal(data.referencedEventId, note.id);
        assert.equal(messagesFor('alice-phone', reply.id).length, 1, 'the p-tagged parent author is not told twice');
      });

      test('a NIP-27 mention pushes once, as a mention, with the mention rewritten', async () => {
        const mention = sign(bob, TEXT_NOTE, [], `hello nostr:${npubEncode(carol.pubkey)}`);
        await publish(relay.url, mention);
        const data = await oneMessage('carol-phone', mention.id);
        assert.equal(data.type, 'mention');
        assert.equal(data.title, 'Bob mentioned you');
        assert.match(data.body ?? '', /^hello @npub1/);
      });

      test("a zap signed by alice's lnurl provider pushes once with the amount; a mismatched p, a forged signer and an unverifiable zap push nothing", async () => {
        const zapReceipt = (request: NostrEvent, zapped: string, note: string, signer = provider) =>
          sign(signer, ZAP_RECEIPT, [
            ['p', zapped],
            ['e', note],
            ['bolt11', SPEC_INVOICE_2500U],
            ['description', JSON.stringify(request)],
          ]);
        const forCarol = sign(
          bob,
          ZAP_REQUEST,
          [
            ['p', carol.pubkey],
            ['relays', relay.url],
          ],
          '',
        );
        const invalid = zapReceipt(forCarol, alice.pubkey, 'e1'.repeat(32));
        const forAlice = sign(
          bob,
          ZAP_REQUEST,
          [
            ['p', alice.pubkey],
            ['relays', relay.url],
            ['amount', '250000000'],
          ],
          'zap!',
        );
        const valid = zapReceipt(forAlice, alice.pubkey, 'e2'.repeat(32));
        const forged = zapReceipt(forAlice, alice.pubkey, 'e3'.repeat(32), makeUser());
        // carol has no lightning address: nobody can say who signs her receipts.
        const unverifiable = zapReceipt(sign(bob, ZAP_REQUEST, [['p', carol.pubkey]], ''), carol.pubkey, 'e4'.repeat(32));
        await publish(relay.url, invalid, forged, unverifiable, valid);
        const data = await oneMessage('alice-phone', valid.id);
        assert.equal(data.type, 'zap');
        assert.equal(data.body, 'Bob zapped you ⚡250000 sats');
        assert.equal(data.senderPubkey, bob.pubkey, 'from the payer, not the provider');
        assert.equal(data.eventKind, String(ZAP_RECEIPT));
        await eventually(
          async () => ((await recipientsCounted('zap', 'wrong_recipient')) === 1 ? true : undefined),
          15_000,
          'the invalid zap refused',
        );
        await eventually(
          async () => ((await recipientsCounted('zap', 'wrong_provider')) === 1 ? true : undefined),
          15_000,
          'the forged zap refused',
        );
        await eventually(
          async () => ((await recipientsCounted('zap', 'unverified')) === 1 ? true : undefined),
          15_000,
          'the unverifiable zap held',
        );
        for (const refused of [invalid, forged]) assert.deepEqual(messagesFor('alice-phone', refused.id), []);
        assert.deepEqual(messagesFor('carol-phone', unverifiable.id), []);
      });

      test('three gift wraps within the DM interval push once, content-free; a user who did not opt in gets none', async () => {
        // NIP-59 backdates wraps by up to two days; these are hours old and must still arrive.
        const wrap = (to: TestUser) => sign(makeUser(), GIFT_WRAP, [['p', to.pubkey]], 'ciphertext', now() - 20 * 3600);
        const wraps = [wrap(alice), wrap(alice), wrap(alice)];
        const toCarol = wrap(carol);
        await publish(relay.url, ...wraps, toCarol);
        await eventually(
          async () => ((await recipientsCounted('directMessage', 'rate_limited')) === 2 ? true : undefined),
          15_000,
          'two wraps rate-limited',
        );
        await eventually(
          async () => ((await recipientsCounted('directMessage', 'not_opted_in')) === 1 ? true : undefined),
          15_000,
          'carol not opted in',
        );
        const pushed = fcm.messages.filter((m) => m.token === 'alice-phone' && m.body.message.data.type === 'directMessage');
        assert.equal(pushed.length, 1);
        const data = pushed[0]?.body.message.data ?? {};
        assert.ok(wraps.some((w) => w.id === data.eventId));
        assert.deepEqual(
          Object.keys(data).sort(),
          ['badge', 'body', 'eventId', 'eventKind', 'receiverNpub', 'receiverPubkey', 'title', 'type'].sort(),
        );
        assert.equal(data.senderPubkey, undefined, 'a wrap hides its sender');
        assert.deepEqual(messagesFor('carol-phone', toCarol.id), []);
      });
    });
  });
}
