import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../util/clock.ts';
import { startFcmFake, type FcmFake } from '../../../test/support/fcm-fake.ts';
import {
  AccessTokenSource,
  FCM_OAUTH_SCOPE,
  FcmCredentialsError,
  TOKEN_REFRESH_MARGIN_MS,
  parseServiceAccount,
  readServiceAccountFile,
  signServiceAccountJwt,
} from './oauth.ts';

const decodePart = (part: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('service-account OAuth', () => {
  const clock = new ManualClock(Date.UTC(2026, 2, 1));
  let fake: FcmFake;

  before(async () => {
    fake = await startFcmFake({ clock });
  });
  after(async () => {
    await fake.stop();
  });

  const account = () => parseServiceAccount(JSON.stringify(fake.credentials), 'fixture');

  test('the assertion is an RS256 JWT with kid, iss, scope, aud = token_uri and a one-hour exp', async () => {
    const jwt = await signServiceAccountJwt(account(), clock.nowMs());
    const [header, claims, signature] = jwt.split('.') as [string, string, string];
    assert.deepEqual(decodePart(header), { alg: 'RS256', typ: 'JWT', kid: fake.credentials.private_key_id });
    const iat = Math.floor(clock.nowMs() / 1000);
    assert.deepEqual(decodePart(claims), {
      iss: fake.credentials.client_email,
      scope: FCM_OAUTH_SCOPE,
      aud: fake.tokenUri,
      iat,
      exp: iat + 3600,
    });
    const publicKey = createPublicKey(fake.credentials.private_key);
    assert.ok(verify('RSA-SHA256', Buffer.from(`${header}.${claims}`), publicKey, Buffer.from(signature, 'base64url')));
  });

  test('the token is fetched once and served from the cache afterwards', async () => {
    const source = new AccessTokenSource({ account: account(), clock });
    const before = fake.stats.tokenRequests;
    const first = await source.get();
    const second = await source.get();
    assert.ok(first.ok && second.ok);
    assert.equal(first.accessToken, second.accessToken);
    assert.ok(fake.issuedAccessTokens.includes(first.accessToken));
    assert.equal(fake.stats.tokenRequests - before, 1);
  });

  test(`the token is refreshed ${TOKEN_REFRESH_MARGIN_MS / 60000} minutes before it expires, not earlier`, async () => {
    const source = new AccessTokenSource({ account: account(), clock });
    const first = await source.get();
    assert.ok(first.ok);
    const refreshAfterMs = 3599 * 1000 - TOKEN_REFRESH_MARGIN_MS; // the fake answers expires_in 3599
    clock.advance(refreshAfterMs - 1);
    const stillCached = await source.get();
    assert.ok(stillCached.ok);
    assert.equal(stillCached.accessToken, first.accessToken);
    clock.advance(1);
    const refreshed = await source.get();
    assert.ok(refreshed.ok);
    assert.notEqual(refreshed.accessToken, first.accessToken);
  });

  test('concurrent callers share one in-flight refresh', async () => {
    const source = new AccessTokenSource({ account: account(), clock });
    fake.script({ route: 'token', delayMs: 30 });
    const before = fake.stats.tokenRequests;
    const results = await Promise.all(Array.from({ length: 20 }, () => source.get()));
    assert.equal(fake.stats.tokenRequests - before, 1);
    const tokens = new Set(results.map((r) => (r.ok ? r.accessToken : 'failed')));
    assert.equal(tokens.size, 1);
    assert.ok(!tokens.has('failed'));
  });

  test('a rejected credential is unauthorized, and the failure is not cached', async () => {
    const source = new AccessTokenSource({ account: account(), clock });
    fake.script({ route: 'token', status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } });
    const rejected = await source.get();
    assert.equal(rejected.ok, false);
    assert.ok(rejected.error.kind === 'unauthorized' && rejected.error.status === 400);
    assert.ok(rejected.error.message.includes('invalid_grant'));
    const retried = await source.get();
    assert.ok(retried.ok);
  });

  test('an assertion signed with the wrong key is refused by the fake → unauthorized', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const wrong = parseServiceAccount(
      JSON.stringify({ ...fake.credentials, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) }),
      'wrong key',
    );
    const result = await new AccessTokenSource({ account: wrong, clock }).get();
    assert.ok(!result.ok && result.error.kind === 'unauthorized' && result.error.message.includes('Invalid JWT Signature'));
  });

  test('a failing token endpoint (5xx, bad body) is initialization', async () => {
    fake.script({ route: 'token', status: 503, body: 'busy' });
    const unavailable = await new AccessTokenSource({ account: account(), clock }).get();
    assert.ok(!unavailable.ok && unavailable.error.kind === 'initialization' && unavailable.error.status === 503);
    fake.script({ route: 'token', status: 200, body: { token_type: 'Bearer' } });
    const malformed = await new AccessTokenSource({ account: account(), clock }).get();
    assert.ok(!malformed.ok && malformed.error.kind === 'initialization' && malformed.error.message.includes('not a token'));
  });

  test('an unreachable or hanging token endpoint is initialization, bounded by the request timeout', async () => {
    const unreachable = parseServiceAccount(JSON.stringify({ ...fake.credentials, token_uri: 'http://127.0.0.1:1/token' }), 'unreachable');
    const refused = await new AccessTokenSource({ account: unreachable, clock }).get();
    assert.ok(!refused.ok && refused.error.kind === 'initialization');

    fake.script({ route: 'token', hang: true });
    const hung = await new AccessTokenSource({ account: account(), clock, requestTimeoutMs: 100 }).get();
    assert.ok(
      !hung.ok && hung.error.kind === 'initialization' && hung.error.message.includes('timed out after 100ms'),
      JSON.stringify(hung),
    );
  });

  test('invalidate drops only the named token', async () => {
    const source = new AccessTokenSource({ account: account(), clock });
    const first = await source.get();
    assert.ok(first.ok);
    source.invalidate('some-other-token');
    const same = await source.get();
    assert.ok(same.ok && same.accessToken === first.accessToken);
    source.invalidate(first.accessToken);
    const fresh = await source.get();
    assert.ok(fresh.ok && fresh.accessToken !== first.accessToken);
  });
});

describe('service-account parsing', () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const valid = {
    client_email: 'svc@p.iam.gserviceaccount.com',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    token_uri: 'https://oauth2.googleapis.com/token',
    project_id: 'p',
  };

  test('a minimal account parses; private_key_id is optional', async () => {
    const account = parseServiceAccount(JSON.stringify(valid), 'inline');
    assert.equal(account.clientEmail, valid.client_email);
    assert.equal(account.privateKeyId, undefined);
    const [header] = (await signServiceAccountJwt(account, 0)).split('.') as [string];
    assert.deepEqual(decodePart(header), { alg: 'RS256', typ: 'JWT' });
  });

  test('each unusable input is a FcmCredentialsError naming the problem', () => {
    const cases: Array<[string, string]> = [
      ['not json', 'are not JSON'],
      ['[]', 'must be a JSON object'],
      [JSON.stringify({ ...valid, client_email: undefined }), 'lack client_email'],
      [JSON.stringify({ ...valid, token_uri: 'ftp://x' }), 'token_uri must be an http(s) URL'],
      [JSON.stringify({ ...valid, private_key: 'garbage' }), 'private_key is not a PEM private key'],
    ];
    for (const [text, fragment] of cases) {
      assert.throws(
        () => parseServiceAccount(text, 'inline'),
        (err: unknown) => err instanceof FcmCredentialsError && err.message.includes(fragment),
        fragment,
      );
    }
  });

  test('a missing file is a FcmCredentialsError; a written one reads back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fcm-oauth-'));
    try {
      assert.throws(() => readServiceAccountFile(join(dir, 'absent.json')), FcmCredentialsError);
      const path = join(dir, 'sa.json');
      writeFileSync(path, JSON.stringify(valid));
      assert.equal(readServiceAccountFile(path).projectId, 'p');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
