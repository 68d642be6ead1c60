/**
 * Visitor limits, access tokens and role gating, black-box over HTTP (reference §1.8, §1.9):
 * ntfy's 429 codes, its auth header forms, VAPID/WebPush headers ignored rather than refused,
 * and which endpoints a process without the api or pusher role serves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openStream, openWs, poll, publish, wsRefusal } from './client.ts';
import { startNtfyTestServer, type NtfyTestServer } from './harness.ts';

const REPLENISH_MS = 5_000;
const VAPID = 'vapid t=eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiJ9.e30.c2ln, k=BAbCdEf';

describe('ntfy visitor limits', () => {
  let server: NtfyTestServer;
  before(async () => {
    server = await startNtfyTestServer({
      config: {
        visitor_exempt_hosts: [],
        visitor_request_burst: 3,
        visitor_request_replenish_secs: REPLENISH_MS / 1000,
        visitor_subscription_limit: 2,
      },
    });
  });
  after(() => server.close());

  test('a burst of requests, then 429 42901 until the bucket refills', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await publish(server.baseUrl, '/limited?up=1', `m${i}`)).status, 200);
    const refused = await publish(server.baseUrl, '/limited?up=1', 'one too many');
    assert.deepEqual([refused.status, refused.body.code], [429, 42901]);
    server.clock.advance(REPLENISH_MS);
    assert.equal((await publish(server.baseUrl, '/limited?up=1', 'after a refill')).status, 200);
    assert.equal((await publish(server.baseUrl, '/limited?up=1', 'empty again')).status, 429);
    server.clock.advance(3 * REPLENISH_MS);
  });

  test('at most 2 open subscriptions; a third is 429 42903 until one closes; health is never limited', async () => {
    server.clock.advance(3 * REPLENISH_MS);
    const first = await openStream(`${server.baseUrl}/subs1/json`);
    const second = await openWs(`${server.baseUrl.replace('http', 'ws')}/subs2/ws`);
    await first.nextJson('open');
    await second.nextJson('open');
    const third = await fetch(`${server.baseUrl}/subs3/json`);
    assert.deepEqual([third.status, ((await third.json()) as { code: number }).code], [429, 42903]);
    assert.equal(await wsRefusal(`${server.baseUrl.replace('http', 'ws')}/subs3/ws`), 429);
    second.close();
    await second.closed;
    server.clock.advance(3 * REPLENISH_MS);
    const again = await openStream(`${server.baseUrl}/subs3/json`);
    assert.equal(again.status, 200);
    first.close();
    again.close();
    for (let i = 0; i < 10; i++) assert.equal((await fetch(`${server.baseUrl}/v1/health`)).status, 200);
  });
});

describe('ntfy access tokens', () => {
  let server: NtfyTestServer;
  before(async () => {
    server = await startNtfyTestServer({
      config: {
        auth_default_access: 'deny-all',
        auth_tokens: ['tk_alice:rw:alerts*', 'tk_writer:wo:up*', 'bob:secret:ro:alerts*'],
      },
    });
  });
  after(() => server.close());

  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  const basic = (user: string, password: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

  test('Bearer, Basic with the token as password, Basic user:password, and ?auth= all authenticate', async () => {
    assert.equal((await publish(server.baseUrl, '/alerts1', 'bearer', { headers: bearer('tk_alice') })).status, 200);
    assert.equal((await publish(server.baseUrl, '/alerts1', 'basic', { headers: basic('', 'tk_alice') })).status, 200);
    assert.equal((await publish(server.baseUrl, '/alerts1', 'basic any user', { headers: basic('someone', 'tk_alice') })).status, 200);
    const auth = Buffer.from('Bearer tk_alice').toString('base64url');
    assert.equal((await publish(server.baseUrl, `/alerts1?auth=${auth}`, 'query')).status, 200);
    const polled = await poll(`${server.baseUrl}/alerts1/json?poll=1`, basic('bob', 'secret'));
    assert.deepEqual(
      polled.messages.map((m) => m.message),
      ['bearer', 'basic', 'basic any user', 'query'],
    );
  });

  test('anonymous and unpermitted requests get 403 40301; unknown credentials 401 40101', async () => {
    const anonymous = await publish(server.baseUrl, '/alerts1', 'x');
    assert.deepEqual([anonymous.status, anonymous.body.code], [403, 40301]);
    const readOnly = await publish(server.baseUrl, '/alerts1', 'x', { headers: basic('bob', 'secret') });
    assert.deepEqual([readOnly.status, readOnly.body.code], [403, 40301]);
    const otherTopic = await publish(server.baseUrl, '/private', 'x', { headers: bearer('tk_alice') });
    assert.equal(otherTopic.status, 403);
    const unknown = await publish(server.baseUrl, '/alerts1', 'x', { headers: bearer('tk_nobody') });
    assert.deepEqual([unknown.status, unknown.body.code], [401, 40101]);
    const badQuery = await publish(server.baseUrl, '/alerts1?auth=%%%', 'x');
    assert.equal(badQuery.status, 401);
  });

  test('a write-only token publishes to up* topics but cannot subscribe; multi-topic reads need every topic', async () => {
    assert.equal((await publish(server.baseUrl, '/upWriteOnly123?up=1', 'x', { headers: bearer('tk_writer') })).status, 200);
    const read = await fetch(`${server.baseUrl}/upWriteOnly123/json?poll=1`, { headers: bearer('tk_writer') });
    assert.equal(read.status, 403);
    const mixed = await fetch(`${server.baseUrl}/alerts1,private/json?poll=1`, { headers: bearer('tk_alice') });
    assert.equal(mixed.status, 403);
    assert.equal(await wsRefusal(`${server.baseUrl.replace('http', 'ws')}/alerts1/ws`), 403);
    const ws = await openWs(`${server.baseUrl.replace('http', 'ws')}/alerts1/ws`, { headers: bearer('tk_alice') });
    assert.equal((await ws.nextJson('open')).event, 'open');
    ws.close();
    const probe = await fetch(`${server.baseUrl}/alerts1/auth`, { headers: bearer('tk_alice') });
    assert.deepEqual(await probe.json(), { success: true });
  });
});

describe('ntfy with tokens but open by default', () => {
  let server: NtfyTestServer;
  before(async () => {
    server = await startNtfyTestServer({ config: { auth_tokens: ['tk_alice:deny:secret*'] } });
  });
  after(() => server.close());

  test('Authorization: vapid … and WebPush … are ignored, not refused (Web Push app servers send them)', async () => {
    assert.equal((await publish(server.baseUrl, '/upVapidTopic12?up=1', 'x', { headers: { Authorization: VAPID } })).status, 200);
    assert.equal(
      (await publish(server.baseUrl, '/upVapidTopic12?up=1', 'x', { headers: { Authorization: 'WebPush eyJhbGciOiJFUzI1NiJ9.e30.c2ln' } }))
        .status,
      200,
    );
    const denied = await publish(server.baseUrl, '/secret1', 'x', { headers: { Authorization: 'Bearer tk_alice' } });
    assert.equal(denied.status, 403, 'a token entry can deny what anonymous access allows');
  });
});

describe('ntfy role gating', () => {
  test('without the pusher role the subscribe endpoints are not served; publishing still is', async () => {
    const server = await startNtfyTestServer({ subscribe: false });
    try {
      assert.equal((await publish(server.baseUrl, '/upNoPusher1234?up=1', 'x')).status, 200);
      for (const transport of ['json', 'sse', 'raw', 'ws'])
        assert.equal((await fetch(`${server.baseUrl}/upNoPusher1234/${transport}`)).status, 404, transport);
      assert.equal(await wsRefusal(`${server.baseUrl.replace('http', 'ws')}/upNoPusher1234/ws`), 404);
    } finally {
      await server.close();
    }
  });

  test('without the api role publishing is not served; subscribing still is', async () => {
    const server = await startNtfyTestServer({ publish: false });
    try {
      assert.equal((await publish(server.baseUrl, '/upNoApi1234567?up=1', 'x')).status, 404);
      assert.equal((await poll(`${server.baseUrl}/upNoApi1234567/json?poll=1`)).status, 200);
    } finally {
      await server.close();
    }
  });
});
