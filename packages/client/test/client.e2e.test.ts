/**
 * The client package against the real binary (a real relay, the FCM fake, SQLite): what an app
 * does with it. A device registered by the package's kind 3079, published to a relay the service
 * watches, gets the push of a like, and the like shows in the inbox counts read through the
 * package; the HTTP registration, preferences, alert words, announcements, viewed marks and NIP-9a
 * callback URLs answer through its typed calls; a refusal is a PushApiError with the catalogue's
 * code; a kind 3080 built by the package removes the device. The inbox-socket helper receives a
 * hint, and when the service restarts (dropping every socket) it reconnects by itself and receives
 * the next one.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { REACTION, VIDEO } from '../../../src/nostr/kinds.ts';
import { signEvent } from '../../../src/nostr/keys.ts';
import { makeUser } from '../../../test/support/nostr-client.ts';
import { publish } from '../../../test/support/publisher.ts';
import { startTestRelay, type TestRelay } from '../../../test/support/relay.ts';
import { startFcmFake, type FcmFake } from '../../../test/support/fcm-fake.ts';
import { E2E_WAIT_MS, baseServiceEnv, makeE2eStore, relaysLive, type E2eStore } from '../../../test/support/e2e-stack.ts';
import { deviceId } from '../../../src/api/inbox.ts';
import type { StorePort } from '../../../src/store/port.ts';
import { eventually, freePort, startServiceProcess, type ServiceProcess } from '../../../test/support/service-process.ts';
import {
  PushApiError,
  connectInboxSocket,
  createPushClient,
  deregistrationEvent,
  localSigner,
  preferencesEvent,
  registrationEvent,
  type InboxHint,
  type InboxSocket,
  type PushClient,
} from '../src/index.ts';

const now = () => Math.floor(Date.now() / 1000);

describe('@nostr-push/client against the real binary', () => {
  let relay: TestRelay;
  let fcm: FcmFake;
  let store: E2eStore;
  let port: number;
  let env: Record<string, string>;
  let service: ServiceProcess;
  let client: PushClient;
  /** The binary's store, read directly for the waits: polling the user API would meet its rate limit. */
  let reader: StorePort;
  let socket: InboxSocket | undefined;
  const serviceKey = makeUser();
  const alice = makeUser();
  const signer = localSigner(alice.secret);
  const token = `client-pkg-device-${process.pid}`;

  /** A like of one of alice's videos by a new key, as any Nostr client publishes it. */
  const likeOfAlicesVideo = (dTag: string) =>
    signEvent(
      {
        kind: REACTION,
        created_at: now(),
        content: '+',
        tags: [
          ['e', 'c1'.repeat(32)],
          ['a', `${VIDEO}:${alice.pubkey}:${dTag}`],
          ['p', alice.pubkey],
          ['k', String(VIDEO)],
        ],
      },
      makeUser().secret,
    );

  const startService = async (): Promise<void> => {
    service = await startServiceProcess({ port, env });
    await relaysLive(service, [relay.url]);
  };

  before(async () => {
    relay = await startTestRelay();
    fcm = await startFcmFake();
    store = await makeE2eStore('sqlite', 'client-pkg');
    port = await freePort();
    env = {
      ...baseServiceEnv({ serviceKey, relays: [relay.url], store }),
      // NIP-98 and the NIP-9a callback URLs are made from it.
      NOSTR_PUSH__SERVER__PUBLIC_URL: `http://127.0.0.1:${port}`,
      NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(store.dataDir),
      NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
      NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
    };
    reader = await store.openReader();
    await startService();
    client = createPushClient({ baseUrl: service.baseUrl, signer });
  });

  // A failed before() leaves some of these unassigned: stop whatever was started.
  /* eslint-disable @typescript-eslint/no-unnecessary-condition */
  after(async () => {
    socket?.close();
    await service?.stop();
    await reader?.close();
    await Promise.all([relay?.stop(), fcm?.stop()]);
    await store?.remove();
  });
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */

  test('a 3079 built by the package registers the device; a like pushes it and counts in the inbox read through the package', async () => {
    const servicePubkey = await client.servicePubkey();
    assert.equal(servicePubkey, serviceKey.pubkey);
    const registration = await registrationEvent(
      signer,
      { token, transport: 'fcm', locale: 'de', timezoneOffsetMinutes: 60 },
      { servicePubkey },
    );
    await publish(relay.url, registration);
    await eventually(async () => ((await reader.tokenOwner(token)) === alice.pubkey ? true : undefined), E2E_WAIT_MS, 'the 3079 applied');
    const device = (await client.devices()).devices.find((d) => d.id === deviceId(token));
    assert.ok(device, 'GET /v1/devices lists the device');
    assert.equal(device.transport, 'fcm');
    assert.equal(device.locale, 'de');
    assert.equal(device.timezoneOffsetMinutes, 60);

    const like = likeOfAlicesVideo('client-pkg-vine');
    await publish(relay.url, like);
    const push = await eventually(
      () => fcm.messages.find((m) => m.token === token && m.body.message.data.eventId === like.id),
      E2E_WAIT_MS,
      'the like pushed to the registered device',
    );
    assert.equal(push.body.message.data.type, 'like');
    assert.equal(push.body.message.data.receiverPubkey, alice.pubkey);

    await eventually(async () => ((await reader.readInboxCounts(alice.pubkey)).types.like.new >= 1 ? true : undefined), E2E_WAIT_MS);
    const counts = await client.inboxCounts();
    assert.deepEqual(counts.types.like, { total: 1, viewed: 0, new: 1 });
    assert.equal(counts.totalNew, 1);
    const viewed = await client.markViewed(['like']);
    assert.deepEqual(viewed.types.like, { total: 1, viewed: 1, new: 0 });
    assert.equal(viewed.totalNew, 0);
  });

  test('the typed calls: HTTP registration, preferences, alert words, announcements, NIP-9a callback URLs and registrations', async () => {
    const tablet = `client-pkg-tablet/${process.pid}`;
    const created = await client.registerDevice(tablet, { transport: 'fcm', locale: 'pt-BR' });
    assert.equal(created.created, true);
    assert.equal(created.device.locale, 'pt-BR');
    const updated = await client.registerDevice(tablet, { transport: 'fcm', locale: 'fr' });
    assert.equal(updated.created, false);
    assert.equal(updated.device.id, created.device.id);
    assert.equal((await client.devices()).devices.length, 2);

    const { preferences } = await client.setPreferences({ kinds: [7, 34236], quietHours: { start: '22:00', end: '07:00' } });
    assert.deepEqual(preferences?.kinds, [7, 34236]);

    assert.deepEqual((await client.setAlertWords(['Sunset', 'nostr'])).words.sort(), ['nostr', 'sunset']);
    assert.deepEqual((await client.alertWords()).words.sort(), ['nostr', 'sunset']);
    assert.deepEqual((await client.announcements()).announcements, []);

    const callback = await client.createNip9aCallback(relay.url);
    assert.match(callback.url, new RegExp(`^${service.baseUrl}/nip9a/cb/`));
    assert.deepEqual(
      (await client.nip9aCallbacks()).callbacks.map((c) => c.id),
      [callback.id],
    );
    await client.revokeNip9aCallback(callback.id);
    assert.deepEqual((await client.nip9aCallbacks()).callbacks, []);
    assert.deepEqual((await client.nip9aRegistrations()).registrations, []);

    await client.removeDevice(tablet);
    assert.equal((await client.devices()).devices.length, 1);
  });

  test("a refusal is a PushApiError with the catalogue's code, and NIP-98 answers 401 for another service's URL", async () => {
    const invalid = await client.registerDevice('client-pkg-bad', { transport: 'webpush' }).catch((err: unknown) => err);
    assert.ok(invalid instanceof PushApiError);
    assert.equal(invalid.status, 400);
    assert.equal(invalid.code, 'INVALID_DEVICE');
    const missing = await client.removeDevice('never-registered').catch((err: unknown) => err);
    assert.ok(missing instanceof PushApiError);
    assert.equal(missing.code, 'DEVICE_NOT_FOUND');
    const unknownPush = await client.notificationOpened('ntf_never_sent').catch((err: unknown) => err);
    assert.ok(unknownPush instanceof PushApiError);
    assert.equal(unknownPush.status, 404);
    // Signed for localhost while the service checks 127.0.0.1 (its server.public_url).
    const elsewhere = createPushClient({ baseUrl: `http://localhost:${port}`, signer });
    const refused = await elsewhere.inboxCounts().catch((err: unknown) => err);
    assert.ok(refused instanceof PushApiError);
    assert.equal(refused.status, 401);
    assert.equal(refused.code, 'NIP98_UNAUTHORIZED');
  });

  test('a 3083 built by the package sets the preferences, a 3080 removes the device', async () => {
    const servicePubkey = serviceKey.pubkey;
    // 3083: only new videos (kind 34236), campaigns on.
    await publish(relay.url, await preferencesEvent(signer, { kinds: [34236], campaignsEnabled: true }, { servicePubkey }));
    const stated = await eventually(
      async () => {
        const preferences = await reader.getPreferences(alice.pubkey);
        return preferences?.kinds.length === 1 ? preferences : undefined;
      },
      E2E_WAIT_MS,
      'the 3083 applied',
    );
    assert.deepEqual(stated, { kinds: [34236], campaignsEnabled: true });
    await publish(relay.url, await deregistrationEvent(signer, token, { servicePubkey }));
    await eventually(async () => ((await reader.tokenOwner(token)) === null ? true : undefined), E2E_WAIT_MS, 'the 3080 applied');
    assert.deepEqual((await client.devices()).devices, [], 'GET /v1/devices lists none');
    // Back for the socket test: a newer 3079 and 3083.
    await publish(relay.url, await preferencesEvent(signer, { kinds: [7, 34236] }, { servicePubkey, createdAt: now() + 1 }));
    await publish(relay.url, await registrationEvent(signer, { token }, { servicePubkey, createdAt: now() + 1 }));
    await eventually(async () => ((await reader.tokenOwner(token)) === alice.pubkey ? true : undefined), E2E_WAIT_MS, 'the device back');
  });

  test('a refused socket upgrade is retried with growing delays, each signed anew, until close()', async () => {
    const delays: number[] = [];
    const errors: unknown[] = [];
    let signed = 0;
    const counting = {
      ...signer,
      signEvent: (template: Parameters<typeof signer.signEvent>[0]) => ((signed += 1), signer.signEvent(template)),
    };
    // Signed for localhost while the service checks 127.0.0.1: every upgrade is refused with 401.
    const refused = connectInboxSocket({
      baseUrl: `http://localhost:${port}`,
      signer: counting,
      WebSocket,
      onHint: () => assert.fail('no hint on a refused socket'),
      onClose: ({ reconnectInMs }) => delays.push(reconnectInMs),
      onError: (error) => errors.push(error),
      backoff: { initialMs: 20, maxMs: 80, factor: 2 },
    });
    await eventually(() => (delays.length >= 4 ? true : undefined), E2E_WAIT_MS, 'four refused attempts');
    refused.close();
    const [first = 0, second = 0, third = 0, fourth = 0] = delays;
    // Each delay is its ceiling (20, 40, 80, then capped at 80) scaled by 50-100 %.
    assert.ok(first >= 10 && first <= 20, `first delay ${first}`);
    assert.ok(second >= 20 && second <= 40, `second delay ${second}`);
    assert.ok(third >= 40 && third <= 80, `third delay ${third}`);
    assert.ok(fourth >= 40 && fourth <= 80, `fourth delay ${fourth}`);
    assert.equal(refused.connections, 0);
    assert.equal(refused.connected, false);
    assert.ok(errors.length >= 4, 'each refusal reported to onError');
    assert.ok(signed >= 4, 'each attempt signed its own NIP-98 event');
  });

  test('the inbox socket helper receives a hint, reconnects after the service drops it, and receives the next', async () => {
    const hints: InboxHint[] = [];
    let opened = 0;
    socket = connectInboxSocket({
      baseUrl: service.baseUrl,
      signer,
      WebSocket,
      onHint: (hint) => hints.push(hint),
      onOpen: () => (opened += 1),
      backoff: { initialMs: 50, maxMs: 500 },
    });
    const live = socket;
    await eventually(() => (live.connected ? true : undefined), E2E_WAIT_MS, 'the socket open');
    const before = (await client.inboxCounts()).totalNew;

    await publish(relay.url, likeOfAlicesVideo('socket-vine-1'));
    const first = await eventually(() => hints.find((h) => h.type === 'like'), E2E_WAIT_MS, 'a like hint');
    assert.equal(first.totalNew, before + 1);

    // The service stops (closing every socket) and comes back on the same port and store.
    await service.stop();
    await eventually(() => (live.connected ? undefined : true), E2E_WAIT_MS, 'the socket dropped');
    await startService();
    await eventually(() => (live.connected && live.connections === 2 ? true : undefined), E2E_WAIT_MS, 'the socket reconnected');
    assert.equal(opened, 2);

    const seen = hints.length;
    await publish(relay.url, likeOfAlicesVideo('socket-vine-2'));
    const next = await eventually(
      () => hints.slice(seen).find((h) => h.type === 'like'),
      E2E_WAIT_MS,
      'a like hint after the reconnection',
    );
    assert.equal(next.totalNew, before + 2);
    live.close();
    assert.equal(live.connected, false);
  });
});
