import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Http2Pool } from '../../src/delivery/http2/pool.ts';
import { AccessTokenSource, parseServiceAccount, signServiceAccountJwt, JWT_BEARER_GRANT_TYPE } from '../../src/delivery/fcm/oauth.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startFcmFake, type FcmFake } from './fcm-fake.ts';

describe('FCM fake: the contract it enforces', () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1));
  let fake: FcmFake;
  let pool: Http2Pool;
  let bearer: string;
  const send = (body: unknown, options: { authorization?: string; project?: string } = {}) =>
    pool.request({
      method: 'POST',
      path: `/v1/projects/${options.project ?? 'fake-project'}/messages:send`,
      headers: [
        ['authorization', options.authorization ?? `Bearer ${bearer}`],
        ['content-type', 'application/json'],
      ],
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  before(async () => {
    fake = await startFcmFake({ clock });
    pool = new Http2Pool({ baseUrl: fake.baseUrl });
    const token = await new AccessTokenSource({ account: parseServiceAccount(JSON.stringify(fake.credentials), 'fake'), clock }).get();
    assert.ok(token.ok);
    bearer = token.accessToken;
  });
  after(async () => {
    await pool.close();
    await fake.stop();
  });

  test('a valid message is accepted, recorded and answered with a message name', async () => {
    const response = await send({ message: { token: 'fake-ok', data: { a: '1' } } });
    assert.equal(response.status, 200);
    assert.match((JSON.parse(response.bodyText) as { name: string }).name, /^projects\/fake-project\/messages\/\d+$/);
    await fake.waitForMessages(1, 1000);
    const received = fake.messages.at(-1);
    assert.equal(received?.token, 'fake-ok');
    assert.equal(received.headers.authorization, `Bearer ${bearer}`);
    assert.equal(received.receivedAtMs, clock.nowMs());
  });

  test('bearer tokens it did not issue are 401 UNAUTHENTICATED', async () => {
    const response = await send({ message: { token: 't' } }, { authorization: 'Bearer forged' });
    assert.equal(response.status, 401);
    assert.equal((JSON.parse(response.bodyText) as { error: { status: string } }).error.status, 'UNAUTHENTICATED');
  });

  test('bodies breaking the data-only contract are 400 INVALID_ARGUMENT and not recorded', async () => {
    const before = fake.messages.length;
    const cases: unknown[] = [
      'not json',
      { message: { token: 't', notification: { title: 'x' } } },
      { message: { data: { a: '1' } } },
      { message: { token: 't', data: { count: 3 } } },
    ];
    for (const body of cases) {
      const response = await send(body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal((JSON.parse(response.bodyText) as { error: { status: string } }).error.status, 'INVALID_ARGUMENT');
    }
    assert.equal(fake.messages.length, before);
  });

  test('another project is 403; an unknown path is an HTML 404', async () => {
    assert.equal((await send({ message: { token: 't' } }, { project: 'someone-else' })).status, 403);
    const notFound = await pool.request({ method: 'GET', path: '/v1/nothing' });
    assert.equal(notFound.status, 404);
    assert.ok(notFound.bodyText.startsWith('<!DOCTYPE html>'));
  });

  test('the token endpoint also answers over h2c, and refuses expired assertions', async () => {
    const account = parseServiceAccount(JSON.stringify({ ...fake.credentials, token_uri: `${fake.baseUrl}/token` }), 'h2c');
    const form = async (nowMs: number) =>
      new URLSearchParams({ grant_type: JWT_BEARER_GRANT_TYPE, assertion: await signServiceAccountJwt(account, nowMs) }).toString();
    const fresh = await pool.request({ method: 'POST', path: '/token', body: await form(clock.nowMs()) });
    assert.equal(fresh.status, 200);
    assert.equal((JSON.parse(fresh.bodyText) as { token_type?: string }).token_type, 'Bearer');
    const expired = await pool.request({ method: 'POST', path: '/token', body: await form(clock.nowMs() - 2 * 3600 * 1000) });
    assert.equal(expired.status, 400);
    assert.equal((JSON.parse(expired.bodyText) as { error?: string }).error, 'invalid_grant');
  });

  test('scripted rules apply per token, skip and count, then expire', async () => {
    fake.script({ token: 'scripted', status: 503, body: 'busy', headers: { 'retry-after': '9' }, skip: 1, times: 2 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await send({ message: { token: 'scripted' } })).status);
    assert.deepEqual(statuses, [200, 503, 503, 200]);
    assert.equal((await send({ message: { token: 'other' } })).status, 200);
  });

  test('waitForMessages rejects with a clear message when too few arrive', async () => {
    await assert.rejects(fake.waitForMessages(fake.messages.length + 5, 50), /received \d+ of \d+ messages within 50ms/);
  });

  test('stop() ends even with a request hanging', async () => {
    const other = await startFcmFake();
    const otherPool = new Http2Pool({ baseUrl: other.baseUrl });
    other.script({ hang: true });
    const hanging = otherPool.request({
      method: 'POST',
      path: '/v1/projects/fake-project/messages:send',
      body: '{"message":{"token":"h"}}',
    });
    const settled = hanging.then(
      () => 'answered',
      () => 'failed',
    );
    while (other.stats.sendRequests === 0) await new Promise((resolve) => setImmediate(resolve));
    await other.stop();
    assert.equal(await settled, 'failed');
    await otherPool.close();
  });

  test("record: 'summary' keeps [eventId, token, time] of accepted messages only", async () => {
    const lean = await startFcmFake({ clock, record: 'summary' });
    const leanPool = new Http2Pool({ baseUrl: lean.baseUrl });
    try {
      const token = await new AccessTokenSource({ account: parseServiceAccount(JSON.stringify(lean.credentials), 'lean'), clock }).get();
      assert.ok(token.ok);
      const post = (body: unknown) =>
        leanPool.request({
          method: 'POST',
          path: '/v1/projects/fake-project/messages:send',
          headers: [['authorization', `Bearer ${token.accessToken}`]],
          body: JSON.stringify(body),
        });
      assert.equal((await post({ message: { token: 'lean-1', data: { eventId: 'e1' } } })).status, 200);
      assert.equal((await post({ message: { token: 'lean-2', data: { eventId: 7 } } })).status, 400, 'still validated');
      await lean.waitForMessages(1, 1000);
      assert.deepEqual(lean.summaries, [['e1', 'lean-1', clock.nowMs()]]);
      assert.deepEqual(lean.messages, []);
    } finally {
      await leanPool.close();
      await lean.stop();
    }
  });
});
