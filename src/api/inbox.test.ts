import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { Hono } from 'hono';
import { createEventVerifier } from '../nostr/event.ts';
import { generateSecretKey, publicKeyOf, signEvent } from '../nostr/keys.ts';
import { HTTP_AUTH_KIND, nip98ReplayGuard } from '../nostr/nip98.ts';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import { openSqliteStore } from '../store/sqlite/index.ts';
import type { StorePort } from '../store/port.ts';
import { ManualClock } from '../util/clock.ts';
import { createHash } from 'node:crypto';
import { adminAnnouncementRoutes, parseExpiresAt } from './admin-announcements.ts';
import { ANNOUNCEMENT_PREFERENCE_CATEGORY } from '../engine/content.ts';
import { requireAppKey } from './auth.ts';
import { createApiKey } from '../platform/api-keys.ts';
import { HttpError } from './errors.ts';
import { deviceId, inboxRoutes } from './inbox.ts';
import { createClientAddressPolicy } from './client-address.ts';

const BASE = 'http://push.test';
/** `inbox.max_alert_word_users_per_address_per_day` of these tests: small, so a test reaches it. */
const ALERT_WORD_USERS_PER_ADDRESS = 3;
const secret = generateSecretKey();
const pubkey = publicKeyOf(secret);

let requestNumber = 0;

/**
 * A fresh auth event for one request. Identical requests in one second would sign identical
 * events (one id, refused as a replay), so each carries a distinct nonce tag, as a client does.
 */
function authorization(method: string, path: string, body?: string, createdAt?: number, key: string = secret): string {
  const tags = [
    ['u', `${BASE}${path}`],
    ['method', method],
    ['nonce', String(++requestNumber)],
  ];
  if (body !== undefined) tags.push(['payload', createHash('sha256').update(body).digest('hex')]);
  const event = signEvent({ kind: HTTP_AUTH_KIND, created_at: createdAt ?? Math.floor(Date.now() / 1000), content: '', tags }, key);
  return `Nostr ${Buffer.from(JSON.stringify(event)).toString('base64')}`;
}

describe('user API', () => {
  let store: StorePort;
  let clock: ManualClock;
  let app: Hono;
  let metrics: Metrics;
  let adminKey: string;
  let sendKey: string;
  const requestedLists: string[] = [];

  beforeEach(async () => {
    requestedLists.length = 0;
    clock = new ManualClock(Date.now());
    store = await openSqliteStore({ path: ':memory:', clock });
    metrics = new Metrics();
    const logger = createLogger({ level: 'silent' });
    app = new Hono();
    app.route(
      '/',
      inboxRoutes({
        store,
        auth: { verifier: await createEventVerifier(), replay: nip98ReplayGuard(store), clock: store.clock, logger },
        metrics,
        logger,
        clientAddresses: createClientAddressPolicy([]),
        maxAlertWordUsersPerAddressPerDay: ALERT_WORD_USERS_PER_ADDRESS,
        userRelaysOf: (appId) => (appId === 'default' ? { metrics, requestLists: (pubkey) => requestedLists.push(pubkey) } : undefined),
      }),
    );
    adminKey = (await createApiKey(store, 'default', 'admin')).key;
    sendKey = (await createApiKey(store, 'default', 'send')).key;
    const adminKeys = requireAppKey({ store, apps: ['default'], logger, metrics }, ['admin']);
    app.route('/', adminAnnouncementRoutes({ auth: adminKeys, metrics, logger }));
    app.onError((err, c) => (err instanceof HttpError ? c.json(err.toJSON(), err.status as 400) : c.json({ error: String(err) }, 500)));
  });
  afterEach(() => store.close());

  const call = async (method: string, path: string, body?: unknown, auth?: string) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const response = await app.request(`${BASE}${path}`, {
      method,
      headers: {
        authorization: auth ?? authorization(method, path, text),
        ...(text === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(text === undefined ? {} : { body: text }),
    });
    return { status: response.status, json: (await response.json().catch(() => null)) as Record<string, unknown> | null };
  };

  test('counts of a new caller: every type at zero; the caller becomes known and counts from then on', async () => {
    const first = await call('GET', '/v1/inbox/counts');
    assert.equal(first.status, 200);
    assert.equal(first.json?.totalNew, 0);
    assert.deepEqual((first.json.types as Record<string, unknown>).keyword, { total: 0, viewed: 0, new: 0 });
    assert.deepEqual(await store.countInboxNotifications([{ countKey: 'e1', recipient: pubkey, type: 'mention' }], 60), [1]);
    assert.equal((await call('GET', '/v1/inbox/counts')).json?.totalNew, 1);
  });

  test('viewed: named types only, every type without a body; unknown types are a 422 with a stable code', async () => {
    await store.rememberInboxUser(pubkey);
    await store.countInboxNotifications(
      [
        { countKey: 'e1', recipient: pubkey, type: 'like' },
        { countKey: 'e2', recipient: pubkey, type: 'comment' },
      ],
      60,
    );
    const likes = await call('POST', '/v1/inbox/viewed', { types: ['like'] });
    assert.equal(likes.status, 200);
    assert.equal(likes.json?.totalNew, 1);
    const refused = await call('POST', '/v1/inbox/viewed', { types: ['likes'] });
    assert.deepEqual([refused.status, refused.json?.code], [422, 'INVALID_INBOX_TYPES']);
    const all = await app.request(`${BASE}/v1/inbox/viewed`, {
      method: 'POST',
      headers: { authorization: authorization('POST', '/v1/inbox/viewed') },
    });
    assert.equal(((await all.json()) as { totalNew: number }).totalNew, 0);
    assert.match(await metrics.registry.metrics(), /push_inbox_api_requests_total\{route="viewed",outcome="INVALID_INBOX_TYPES"\} 1/);
  });

  test('alert words: PUT normalises and replaces, GET reads back; a list that is not single words is a 422', async () => {
    const put = await call('PUT', '/v1/alert-words', { words: ['Pizza!', 'sunset', 'PIZZA'] });
    assert.deepEqual([put.status, put.json], [200, { words: ['pizza', 'sunset'] }]);
    assert.deepEqual((await call('GET', '/v1/alert-words')).json, { words: ['pizza', 'sunset'] });
    assert.deepEqual([...(await store.alertWordWatchers(['pizza'])).keys()], ['pizza']);
    for (const words of [['two words'], ['no'], 'pizza']) {
      const refused = await call('PUT', '/v1/alert-words', { words });
      assert.deepEqual([refused.status, refused.json?.code], [422, 'INVALID_ALERT_WORDS'], JSON.stringify(words).slice(0, 40));
    }
    assert.deepEqual((await call('GET', '/v1/alert-words')).json, { words: ['pizza', 'sunset'] });
  });

  test('alert words per user: more than inbox.max_alert_words_per_user (50) is TOO_MANY_ALERT_WORDS, and nothing changes', async () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}${i}`);
    assert.equal((await call('PUT', '/v1/alert-words', { words: words(50) })).status, 200);
    const refused = await call('PUT', '/v1/alert-words', { words: words(51) });
    assert.deepEqual([refused.status, refused.json?.code], [422, 'TOO_MANY_ALERT_WORDS']);
    assert.match(String(refused.json?.error), /51 distinct alert words; at most 50/);
    assert.equal((await store.readAlertWords(pubkey)).length, 50);
  });

  test(`alert words per address: at most ${ALERT_WORD_USERS_PER_ADDRESS} keys a day set words from one address; 429 with Retry-After, then a new day`, async () => {
    const keys = Array.from({ length: ALERT_WORD_USERS_PER_ADDRESS + 1 }, () => generateSecretKey());
    const put = async (key: string, words: string[]) => {
      const text = JSON.stringify({ words });
      return app.request(`${BASE}/v1/alert-words`, {
        method: 'PUT',
        headers: {
          authorization: authorization('PUT', '/v1/alert-words', text, Math.floor(store.clock.nowMs() / 1000), key),
          'content-type': 'application/json',
        },
        body: text,
      });
    };
    for (const key of keys.slice(0, ALERT_WORD_USERS_PER_ADDRESS)) assert.equal((await put(key, ['pizza'])).status, 200);
    const last = keys[ALERT_WORD_USERS_PER_ADDRESS] as string;
    const refused = await put(last, ['pizza']);
    assert.equal(refused.status, 429);
    assert.equal(((await refused.json()) as { code: string }).code, 'CLIENT_QUOTA_EXCEEDED');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 86_400, `Retry-After ${retryAfter}`);
    assert.deepEqual(await store.readAlertWords(publicKeyOf(last)), []);
    // A key already counted today changes its words freely; clearing stores nothing and is never refused.
    assert.equal((await put(keys[0] as string, ['sunset'])).status, 200);
    assert.equal((await put(last, [])).status, 200);
    clock.advance(retryAfter * 1000);
    assert.equal((await put(last, ['pizza'])).status, 200);
  });

  test('devices: listed with redacted tokens; DELETE removes one of the caller’s, 404 for anything else', async () => {
    await store.registerToken(pubkey, { token: 'secret-fcm-token-123456', transport: 'fcm', timezoneOffsetMinutes: 60 });
    await store.registerToken(publicKeyOf(generateSecretKey()), { token: 'someone-elses-token', transport: 'fcm' });
    const listed = await call('GET', '/v1/devices');
    const devices = listed.json?.devices as Array<Record<string, unknown>>;
    assert.equal(devices.length, 1);
    assert.equal(devices[0]?.id, deviceId('secret-fcm-token-123456'));
    assert.equal(JSON.stringify(listed.json).includes('secret-fcm-token-123456'), false, 'the token never travels whole');
    assert.equal(devices[0].timezoneOffsetMinutes, 60);
    const other = await call('DELETE', `/v1/devices/${deviceId('someone-elses-token')}`);
    assert.deepEqual([other.status, other.json?.code], [404, 'DEVICE_NOT_FOUND']);
    assert.equal((await call('DELETE', `/v1/devices/${deviceId('secret-fcm-token-123456')}`)).status, 204);
    assert.deepEqual(await store.listDevices(pubkey), []);
  });

  test('PUT /v1/devices/{token}: a 3079 over HTTP, 201 when new and 200 when updated; bad fields are 400 with a stable code', async () => {
    const token = 'fcm-token-over-http-0001';
    const first = await call('PUT', `/v1/devices/${token}`, { timezoneOffsetMinutes: 120, locale: 'pt-BR' });
    assert.equal(first.status, 201);
    const device = first.json?.device as Record<string, unknown>;
    assert.deepEqual([device.id, device.transport, device.timezoneOffsetMinutes, device.locale], [deviceId(token), 'fcm', 120, 'pt-BR']);
    assert.equal(JSON.stringify(first.json).includes(token), false, 'the token is shown as a prefix only');
    assert.deepEqual(await store.listDevices(pubkey), [{ token, transport: 'fcm', timezoneOffsetMinutes: 120, locale: 'pt-BR' }]);
    const again = await call('PUT', `/v1/devices/${token}`, { token, timezoneOffsetMinutes: -60 });
    assert.equal(again.status, 200);
    assert.equal((await store.listDevices(pubkey))[0]?.timezoneOffsetMinutes, -60);

    const cases: Array<[unknown, string]> = [
      [{ token: 'another-token' }, 'DEVICE_TOKEN_MISMATCH'],
      [{ transport: 'pigeon' }, 'INVALID_DEVICE'],
      [{ timezoneOffsetMinutes: 9999 }, 'INVALID_DEVICE'],
      [{ encryptTo: 'not-a-key' }, 'INVALID_DEVICE'],
      [['not', 'an', 'object'], 'UNPROCESSABLE_BODY'],
    ];
    for (const [body, code] of cases) {
      const refused = await call('PUT', `/v1/devices/${token}-x`, body);
      assert.deepEqual([refused.status, refused.json?.code], [code === 'UNPROCESSABLE_BODY' ? 422 : 400, code], JSON.stringify(body));
    }
    assert.match(String((await call('PUT', `/v1/devices/${token}-x`, { transport: 'pigeon' })).json?.error), /unknown transport "pigeon"/);
    assert.equal((await store.listDevices(pubkey)).length, 1, 'no refused registration was stored');
    assert.match(await metrics.registry.metrics(), /push_control_events_total\{kind="3079",outcome="invalid_payload"\} [1-9]/);
  });

  test("PUT /v1/devices/{token} with relays keeps them as the user's read relays, as a 3079 does; bad relays are 400", async () => {
    const put = await call('PUT', '/v1/devices/relay-reader-token', { relays: ['wss://relay.example.com'] });
    assert.equal(put.status, 201);
    const [lists] = await store.getUserRelayLists([pubkey]);
    assert.deepEqual(lists?.app?.relays, ['wss://relay.example.com']);
    assert.deepEqual(requestedLists, [pubkey], "the user's 10002 and 10050 are asked for, as for a 3079");
    assert.deepEqual(
      (await store.userRelayChangesSince(0, 10)).map((change) => change.pubkey),
      [pubkey],
    );
    const refused = await call('PUT', '/v1/devices/relay-reader-token-2', { relays: 'wss://relay.example.com' });
    assert.deepEqual([refused.status, refused.json?.code], [400, 'INVALID_DEVICE']);
    assert.equal(await store.tokenOwner('relay-reader-token-2'), null);
  });

  test('a token registered over HTTP by someone else moves to the caller, as a 3079 moves it', async () => {
    const other = publicKeyOf(generateSecretKey());
    await store.registerToken(other, { token: 'shared-device-token', transport: 'fcm' });
    assert.equal((await call('PUT', '/v1/devices/shared-device-token', {})).status, 201);
    assert.deepEqual(await store.listDevices(other), []);
    assert.equal((await store.listDevices(pubkey)).length, 1);
  });

  test('DELETE /v1/devices/{token}: removes by token as a 3080 does, and by listed id; PUT of a URL-like token round-trips', async () => {
    const endpointToken = 'https://ntfy.example/up/AbC?x=1';
    const put = await call('PUT', `/v1/devices/${encodeURIComponent(endpointToken)}`, {});
    assert.equal(put.status, 201);
    assert.equal((await store.listDevices(pubkey))[0]?.token, endpointToken);
    assert.equal((await call('DELETE', `/v1/devices/${encodeURIComponent(endpointToken)}`)).status, 204);
    assert.deepEqual(await store.listDevices(pubkey), []);
    assert.deepEqual((await call('DELETE', `/v1/devices/${encodeURIComponent(endpointToken)}`)).json?.code, 'DEVICE_NOT_FOUND');
  });

  test('PUT /v1/preferences: a 3083 over HTTP replaces the preferences; bad fields are 400 INVALID_PREFERENCES and change nothing', async () => {
    const put = await call('PUT', '/v1/preferences', { kinds: [7, 1111], campaignsEnabled: false, alertWords: ['pizza'] });
    assert.equal(put.status, 200);
    assert.deepEqual(put.json?.preferences, await store.getPreferences(pubkey));
    assert.deepEqual((await store.getPreferences(pubkey))?.kinds, [7, 1111]);
    assert.deepEqual(await store.readAlertWords(pubkey), ['pizza']);
    const refused = await call('PUT', '/v1/preferences', { kinds: 'all' });
    assert.deepEqual([refused.status, refused.json?.code], [400, 'INVALID_PREFERENCES']);
    assert.deepEqual((await store.getPreferences(pubkey))?.kinds, [7, 1111]);
  });

  test('NIP-98: no header, a replayed auth event, a stale one and a wrong URL are 401 NIP98_UNAUTHORIZED', async () => {
    const noHeader = await app.request(`${BASE}/v1/inbox/counts`);
    assert.deepEqual([noHeader.status, ((await noHeader.json()) as { code: string }).code], [401, 'NIP98_UNAUTHORIZED']);
    const once = authorization('GET', '/v1/inbox/counts');
    assert.equal((await call('GET', '/v1/inbox/counts', undefined, once)).status, 200);
    assert.equal((await call('GET', '/v1/inbox/counts', undefined, once)).status, 401, 'replayed');
    const stale = authorization('GET', '/v1/inbox/counts', undefined, Math.floor(Date.now() / 1000) - 600);
    assert.equal((await call('GET', '/v1/inbox/counts', undefined, stale)).status, 401, 'stale');
    assert.equal((await call('GET', '/v1/inbox/counts', undefined, authorization('GET', '/v1/alert-words'))).status, 401, 'other URL');
    const unsigned = authorization('PUT', '/v1/alert-words', JSON.stringify({ words: ['pizza'] }));
    const tampered = await app.request(`${BASE}/v1/alert-words`, {
      method: 'PUT',
      headers: { authorization: unsigned, 'content-type': 'application/json' },
      body: JSON.stringify({ words: ['tampered'] }),
    });
    assert.equal(tampered.status, 401, 'payload mismatch');
  });

  test('announcements: the admin route needs an admin API key and a future expiry; users list the active ones and they stop counting', async () => {
    const post = (body: unknown, token = adminKey) =>
      app.request(`${BASE}/v1/admin/announcements`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const expiresAt = new Date(store.clock.nowMs() + 3_600_000).toISOString();
    assert.equal((await post({ text: 'Hello', expiresAt }, 'nope')).status, 401);
    assert.equal((await post({ text: 'Hello', expiresAt }, sendKey)).status, 403, 'a send key is not an admin key');
    for (const bad of [
      { text: '', expiresAt },
      { text: 'Hi', expiresAt: 'tomorrow' },
      { text: 'Hi', expiresAt: '2000-01-01T00:00:00Z' },
      ['x'],
    ]) {
      const refused = await post(bad);
      assert.equal(refused.status, 422, JSON.stringify(bad));
    }
    const created = await post({ text: 'Hello', expiresAt });
    assert.equal(created.status, 201);
    const { id } = (await created.json()) as { id: number };
    assert.equal(((await call('GET', '/v1/inbox/counts')).json?.types as Record<string, { new: number }>).announcement?.new, 1);
    const listed = await call('GET', '/v1/announcements');
    assert.deepEqual(
      (listed.json?.announcements as Array<Record<string, unknown>>).map((a) => [a.id, a.text, a.expiresAt]),
      [[id, 'Hello', expiresAt]],
    );
    assert.equal(((await call('GET', '/v1/inbox/counts')).json?.types as Record<string, { new: number }>).announcement?.new, 0);
  });

  test('announcements with push: a campaign of kind announcement is created for the opted-in; bad push or title fields are 422', async () => {
    const post = (body: unknown) =>
      app.request(`${BASE}/v1/admin/announcements`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const expiresAt = new Date(store.clock.nowMs() + 3_600_000).toISOString();
    for (const bad of [
      { text: 'Hi', expiresAt, push: 'yes' },
      { text: 'Hi', expiresAt, push: true, title: '' },
      { text: 'Hi', expiresAt, push: true, title: 'x'.repeat(101) },
    ]) {
      const refused = await post(bad);
      assert.equal(refused.status, 422, JSON.stringify(bad));
      assert.equal(((await refused.json()) as { code: string }).code, 'INVALID_ANNOUNCEMENT');
    }
    const silent = (await (await post({ text: 'No push', expiresAt })).json()) as { id: number; push?: unknown };
    assert.equal(silent.push, undefined, 'no push unless asked');
    assert.equal(await store.getCampaign('default', `announcement-${silent.id}`), null, 'no campaign unless asked');

    const pushed = await post({ text: 'Maintenance at 22:00 UTC', expiresAt, push: true, title: 'Heads up' });
    assert.equal(pushed.status, 201);
    const answer = (await pushed.json()) as { id: number; push: { campaignId: string; preferenceCategory: number } };
    assert.deepEqual(answer.push, { campaignId: `announcement-${answer.id}`, preferenceCategory: ANNOUNCEMENT_PREFERENCE_CATEGORY });
    const campaign = await store.getCampaign('default', answer.push.campaignId);
    assert.deepEqual(
      campaign?.request,
      {
        idempotencyKey: `announcement-${answer.id}`,
        title: 'Heads up',
        body: 'Maintenance at 22:00 UTC',
        audience: 'all',
        kind: 'announcement',
        announcementId: answer.id,
      },
      'the push is a campaign of kind announcement to everyone (consent is checked per user when it expands)',
    );
    assert.equal(campaign.state, 'running');
  });

  test('tenancy: X-App names the app whose inbox and announcements the caller reads; an unknown app is 404', async () => {
    const storeB = await openSqliteStore({ path: ':memory:', clock: store.clock });
    try {
      const logger = createLogger({ level: 'silent' });
      const views = new Map([['b', storeB]]);
      const tenantApp = new Hono();
      tenantApp.route(
        '/',
        inboxRoutes({
          store,
          storeOf: (appId) => views.get(appId),
          auth: { verifier: await createEventVerifier(), replay: nip98ReplayGuard(store), clock: store.clock, logger },
          metrics,
          logger,
          clientAddresses: createClientAddressPolicy([]),
        }),
      );
      tenantApp.onError((err, c) =>
        err instanceof HttpError ? c.json(err.toJSON(), err.status as 400) : c.json({ error: String(err) }, 500),
      );
      const get = async (path: string, headers: Record<string, string>) => {
        const res = await tenantApp.request(`${BASE}${path}`, { headers: { authorization: authorization('GET', path), ...headers } });
        return { status: res.status, json: (await res.json()) as Record<string, unknown> };
      };
      await storeB.publishAnnouncement('Only for app b', store.clock.nowMs() + 3_600_000);
      const ofB = await get('/v1/announcements', { 'x-app': 'b' });
      assert.equal(ofB.status, 200);
      assert.deepEqual(
        (ofB.json.announcements as Array<{ text: string }>).map((a) => a.text),
        ['Only for app b'],
      );
      const ofDefault = await get('/v1/announcements', {});
      assert.deepEqual(ofDefault.json.announcements, [], 'the default app has none');
      const unknown = await get('/v1/announcements', { 'x-app': 'nope' });
      assert.deepEqual([unknown.status, unknown.json.code], [404, 'NOT_FOUND']);
    } finally {
      await storeB.close();
    }
  });

  test('parseExpiresAt: ISO 8601 or unix seconds', () => {
    assert.equal(parseExpiresAt('2030-01-01T00:00:00Z'), Date.UTC(2030, 0, 1));
    assert.equal(parseExpiresAt(1_900_000_000), 1_900_000_000_000);
    for (const bad of ['soon', '', -5, null, '2030-13-45T99:00:00Z']) assert.equal(parseExpiresAt(bad), null, String(bad));
  });
});
