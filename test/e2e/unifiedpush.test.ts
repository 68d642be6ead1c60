/**
 * End to end for Web Push / UnifiedPush delivery: the real binary, a real relay, nostr-tools
 * clients, and a loopback push service that checks VAPID and decrypts with the subscription's
 * private key. A like from a Nostr key reaches a `unifiedpush` device as the FCM data map,
 * encrypted (RFC 8291) and signed (RFC 8292); a 410 removes the subscription. Then through our
 * own ntfy server: a like to an endpoint on it is appended to the topic with no HTTP hop and
 * streamed to a subscriber, and the `web-push` package, as a real app server, publishes to it;
 * `http_ece` decrypts what the subscriber received. On each store.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createECDH, randomBytes, type ECDH } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { METADATA, REACTION, REGISTER_TOKEN } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { VAPID_KEY_FILE } from '../../src/delivery/webpush/vapid-key.ts';
import * as ece from 'http_ece';
import { Redis } from 'ioredis';
import webpush from 'web-push';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startWebPushFake, type FakeSubscription, type ReceivedPush, type WebPushFake } from '../support/webpush-fake.ts';
import { eventually, freePort, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

const now = () => Math.floor(Date.now() / 1000);
const SUBJECT = 'mailto:push-ops@nostr-push.test';

/** A UnifiedPush topic as the ntfy Android app names them: `up` and 12 alphanumerics. */
const upTopic = (): string => `up${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x').slice(0, 12)}`;

/** The fleet's VAPID key pair as the Redis store keeps it (JSON). */
async function storedFleetKeys(url: string): Promise<string> {
  const client = new Redis(url);
  try {
    return (await client.get('webpush:vapid')) ?? 'null';
  } finally {
    client.disconnect();
  }
}

/** A UnifiedPush app's keys (what it hands its app server with the endpoint). */
function appKeys(): { ecdh: ECDH; p256dh: string; auth: string } {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { ecdh, p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') };
}

interface NtfyFrame {
  id: string;
  event: string;
  topic: string;
  message?: string;
  encoding?: string;
}

/** One `/{topics}/json` stream, as the ntfy Android app holds it for all its topics. */
interface JsonStream {
  frames: NtfyFrame[];
  messages(topic: string): NtfyFrame[];
  close(): void;
}

async function subscribeJson(baseUrl: string, topics: string[]): Promise<JsonStream> {
  const frames: NtfyFrame[] = [];
  let request: ClientRequest | undefined;
  await new Promise<void>((resolve, reject) => {
    request = get(`${baseUrl}/${topics.join(',')}/json`, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`subscribe answered ${res.statusCode}`));
      let buffered = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) !== -1) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.trim() === '') continue;
          const frame = JSON.parse(line) as NtfyFrame;
          frames.push(frame);
          if (frame.event === 'open') resolve();
        }
      });
      res.on('error', () => undefined);
    });
    request.on('error', reject);
  });
  return {
    frames,
    messages: (topic) => frames.filter((f) => f.event === 'message' && f.topic === topic),
    close: () => request?.destroy(),
  };
}

/** The bytes a distributor hands the app: base64-decoded when the server says so (ntfy's rule). */
const bodyOf = (frame: NtfyFrame): Buffer =>
  frame.encoding === 'base64' ? Buffer.from(frame.message ?? '', 'base64') : Buffer.from(frame.message ?? '', 'utf8');

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`UnifiedPush / Web Push delivery end to end (${adapter})`, () => {
    let relay: TestRelay;
    let pushService: WebPushFake;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let reader: StorePort;
    let service: ServiceProcess;
    let baseUrl: string;
    const serviceKey = makeUser();
    const alice = makeUser();
    const bob = makeUser();
    const videoId = 'ab'.repeat(32);

    const sign = (user: TestUser, kind: number, tags: string[][], content = '') =>
      signEvent({ kind, created_at: now(), tags, content }, user.secret);
    const pushesFor = (subscription: FakeSubscription, eventId?: string): ReceivedPush[] =>
      pushService.received.filter((p) => {
        if (p.subscriptionId !== subscription.id) return false;
        if (eventId === undefined) return true;
        const data = p.plaintext ? (JSON.parse(p.plaintext.toString('utf8')) as Record<string, string>) : {};
        return data.eventId === eventId;
      });
    const register = async (
      user: TestUser,
      subscription: Pick<FakeSubscription, 'endpoint' | 'p256dh' | 'auth'>,
      transport: 'unifiedpush' | 'webpush',
    ) => {
      const payload = {
        token: subscription.endpoint,
        transport,
        endpoint: subscription.endpoint,
        p256dh: subscription.p256dh,
        auth: subscription.auth,
      };
      await publish(relay.url, controlEvent(user, REGISTER_TOKEN, payload, serviceKey.pubkey));
      await eventually(
        async () => ((await reader.tokenOwner(subscription.endpoint)) === user.pubkey ? true : undefined),
        15_000,
        `${transport} device registered`,
      );
    };

    before(async () => {
      relay = await startTestRelay();
      pushService = await startWebPushFake({ expectedSubject: SUBJECT });
      dataDir = mkdtempSync(join(tmpdir(), `np-unifiedpush-${adapter}-`));
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      }
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      service = await startServiceProcess({
        env: {
          NOSTR_PUSH__SERVER__LISTEN_ADDR: `127.0.0.1:${port}`,
          // Endpoints on this server's own ntfy topics are appended to the topic, with no HTTP hop.
          NOSTR_PUSH__NTFY__BASE_URL: baseUrl,
          NOSTR_PUSH__NTFY__VISITOR_EXEMPT_HOSTS: '127.0.0.1',
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
          NOSTR_PUSH__NOSTR__RELAYS: relay.url,
          NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
          NOSTR_PUSH__WEBPUSH__VAPID_SUBJECT: SUBJECT,
          // The push service is on 127.0.0.1; production refuses loopback endpoints.
          NOSTR_PUSH__WEBPUSH__ALLOW_PRIVATE_ENDPOINTS: 'true',
        },
      });
      reader =
        adapter === 'redis' ? await openRedisStore({ url: storeUrl }) : await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });
      await service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relay.url, 15_000, 'relay live');
      await publish(relay.url, sign(bob, METADATA, [], JSON.stringify({ name: 'bob', display_name: 'Bob' })));
    });

    after(async () => {
      /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
      await service?.stop();
      await reader?.close();
      await Promise.all([relay?.stop(), pushService?.stop()]);
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    });

    test('a like reaches a unifiedpush device: aes128gcm that decrypts to the data map, TTL, Urgency high, VAPID signed with the kept key', async () => {
      const phone = pushService.subscribe();
      await register(alice, phone, 'unifiedpush');
      const like = sign(
        bob,
        REACTION,
        [
          ['e', videoId],
          ['p', alice.pubkey],
        ],
        '+',
      );
      await publish(relay.url, like);
      const [push] = await eventually(
        () => (pushesFor(phone, like.id).length > 0 ? pushesFor(phone, like.id) : undefined),
        15_000,
        'the push for the like',
      );
      assert.ok(push);
      assert.equal(push.status, 201);
      assert.deepEqual(push.problems, []);
      assert.deepEqual(push.vapid.problems, [], 'aud = the push service origin, exp ≤ 24 h, sub = the configured contact, signature valid');
      assert.equal(push.decryptError, null);
      const data = JSON.parse((push.plaintext as Buffer).toString('utf8')) as Record<string, string>;
      assert.equal(data.type, 'like');
      assert.equal(data.eventId, like.id);
      assert.equal(data.receiverPubkey, alice.pubkey);
      assert.equal(data.senderName, 'Bob');
      assert.equal(data.title, 'New like');
      for (const value of Object.values(data)) assert.equal(typeof value, 'string');
      assert.equal(push.headers['content-encoding'], 'aes128gcm');
      assert.equal(push.headers.urgency, 'high');
      assert.equal(push.headers.ttl, '86400');
      // SQLite keeps the generated key in the data directory; a Redis fleet shares it through the store.
      const kept = JSON.parse(
        adapter === 'sqlite' ? readFileSync(join(dataDir, VAPID_KEY_FILE), 'utf8') : await storedFleetKeys(redis?.url ?? ''),
      ) as { publicKey: string };
      assert.equal(push.vapid.publicKey, kept.publicKey, 'the VAPID key generated on first start and kept');
      const served = (await (await fetch(`${baseUrl}/v1/webpush/vapid-public-key`)).json()) as { publicKey: string };
      assert.equal(served.publicKey, kept.publicKey, 'browser apps read the same key from the API');
      assert.equal(pushesFor(phone, like.id).length, 1);
    });

    test('a webpush device gets the same; a 429 with Retry-After is retried and delivered once', async () => {
      const carol = makeUser();
      const browser = pushService.subscribe();
      await register(carol, browser, 'webpush');
      pushService.script({ subscriptionId: browser.id, status: 429, headers: { 'retry-after': '1' } });
      const like = sign(
        bob,
        REACTION,
        [
          ['e', videoId],
          ['p', carol.pubkey],
        ],
        '+',
      );
      await publish(relay.url, like);
      await eventually(() => (pushesFor(browser, like.id).some((p) => p.status === 201) ? true : undefined), 20_000, 'the retried push');
      assert.deepEqual(
        pushesFor(browser, like.id).map((p) => p.status),
        [429, 201],
      );
    });

    test('a 410 from the push service removes the subscription', async () => {
      const dave = makeUser();
      const stale = pushService.subscribe();
      await register(dave, stale, 'unifiedpush');
      pushService.unsubscribe(stale.id);
      await publish(
        relay.url,
        sign(
          bob,
          REACTION,
          [
            ['e', videoId],
            ['p', dave.pubkey],
          ],
          '+',
        ),
      );
      await eventually(
        async () => ((await reader.tokenOwner(stale.endpoint)) === null ? true : undefined),
        15_000,
        'the dead subscription pruned',
      );
    });

    test('through our own ntfy server: a like to an endpoint on it is appended to the topic and streamed to the subscriber, and http_ece decrypts it', async () => {
      const erin = makeUser();
      const topic = upTopic();
      const keys = appKeys();
      const stream = await subscribeJson(baseUrl, [topic, upTopic()]);
      try {
        await register(erin, { endpoint: `${baseUrl}/${topic}?up=1`, p256dh: keys.p256dh, auth: keys.auth }, 'unifiedpush');
        const before = pushService.received.length;
        const like = sign(
          bob,
          REACTION,
          [
            ['e', videoId],
            ['p', erin.pubkey],
          ],
          '+',
        );
        await publish(relay.url, like);
        const [frame] = await eventually(
          () => (stream.messages(topic).length > 0 ? stream.messages(topic) : undefined),
          15_000,
          'the push on the ntfy stream',
        );
        assert.ok(frame);
        assert.match(frame.id, /^[0-9A-Za-z]{12}$/);
        const body = bodyOf(frame);
        assert.equal(body.readUInt32BE(16), 4096, 'an RFC 8188 header: record size 4096');
        assert.equal(body[20], 65, 'keyid is the 65-byte ephemeral key');
        const data = JSON.parse(
          ece.decrypt(body, { version: 'aes128gcm', privateKey: keys.ecdh, authSecret: keys.auth }).toString('utf8'),
        ) as Record<string, string>;
        assert.equal(data.type, 'like');
        assert.equal(data.eventId, like.id);
        assert.equal(data.receiverPubkey, erin.pubkey);
        assert.equal(pushService.received.length, before, 'no push went to the HTTP push service');
        const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
        assert.match(metrics, /push_webpush_sends_succeeded_total\{route="local"\} [1-9]/);
        assert.equal(stream.messages(topic).length, 1);
      } finally {
        stream.close();
      }
    });

    test('web-push as a real app server publishes to our ntfy endpoint; the subscriber gets the exact bytes, and http_ece decrypts them', async () => {
      const topic = upTopic();
      const keys = appKeys();
      const stream = await subscribeJson(baseUrl, [upTopic(), topic]);
      try {
        const vapid = webpush.generateVAPIDKeys();
        const payload = JSON.stringify({ hello: 'from a real app server', n: 42 });
        const details = webpush.generateRequestDetails(
          { endpoint: `${baseUrl}/${topic}?up=1`, keys: { p256dh: keys.p256dh, auth: keys.auth } },
          payload,
          {
            vapidDetails: { subject: 'mailto:app@example.org', publicKey: vapid.publicKey, privateKey: vapid.privateKey },
            TTL: 600,
            urgency: 'high',
            topic: 'updates',
          },
        );
        assert.ok(details.body);
        const headers = Object.fromEntries(
          Object.entries(details.headers)
            .filter(([name]) => name.toLowerCase() !== 'content-length')
            .map(([name, value]) => [name, String(value)]),
        );
        const response = await fetch(details.endpoint, { method: details.method, headers, body: new Uint8Array(details.body) });
        assert.equal(response.ok, true, `publish answered ${response.status}: ${await response.clone().text()}`);
        const published = (await response.json()) as { id: string };
        const [frame] = await eventually(
          () => (stream.messages(topic).length > 0 ? stream.messages(topic) : undefined),
          15_000,
          'the published message on the stream',
        );
        assert.ok(frame);
        assert.equal(frame.id, published.id, 'the publish answer and the delivery carry the same id');
        assert.deepEqual(bodyOf(frame), details.body, 'byte for byte what web-push sent');
        assert.equal(
          ece.decrypt(bodyOf(frame), { version: 'aes128gcm', privateKey: keys.ecdh, authSecret: keys.auth }).toString('utf8'),
          payload,
        );
      } finally {
        stream.close();
      }
    });
  });
}
