import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { getToken } from 'nostr-tools/nip98';
import { finalizeEvent } from 'nostr-tools/pure';
import { createEventVerifier, type EventVerifier, type NostrEvent } from './event.ts';
import { generateSecretKey, publicKeyOf, signEvent, secretKeyBytes } from './keys.ts';
import { HTTP_AUTH_KIND, NIP98_MAX_SKEW_SECS, verifyNip98, type Nip98FailureCode, type Nip98Request } from './nip98.ts';

const URL_ = 'https://push.example.com/v1/inbox/counts?x=1';
const NOW = 1_780_000_000;

function memoryReplay(): (id: string, ttl: number) => Promise<boolean> {
  const seen = new Set<string>();
  return async (id) => {
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  };
}

function header(event: NostrEvent): string {
  return `Nostr ${Buffer.from(JSON.stringify(event)).toString('base64')}`;
}

interface AuthShape {
  kind?: number;
  createdAt?: number;
  url?: string | null;
  method?: string | null;
  payload?: string;
}

function authEvent(secret: string, shape: AuthShape = {}): NostrEvent {
  const tags: string[][] = [];
  if (shape.url !== null) tags.push(['u', shape.url ?? URL_]);
  if (shape.method !== null) tags.push(['method', shape.method ?? 'POST']);
  if (shape.payload !== undefined) tags.push(['payload', shape.payload]);
  return signEvent({ kind: shape.kind ?? HTTP_AUTH_KIND, created_at: shape.createdAt ?? NOW, tags, content: '' }, secret);
}

const BODY = Buffer.from('{"types":["like"]}');
const BODY_HASH = createHash('sha256').update(BODY).digest('hex');

describe('NIP-98 verification', () => {
  let verifier: EventVerifier | undefined;
  const secret = generateSecretKey();
  const pubkey = publicKeyOf(secret);

  async function check(request: Partial<Nip98Request>, replay = memoryReplay()) {
    verifier ??= await createEventVerifier();
    return verifyNip98({ method: 'POST', url: URL_, body: BODY, ...request }, { nowSecs: NOW, verifier, replay });
  }

  async function refused(request: Partial<Nip98Request>, code: Nip98FailureCode): Promise<void> {
    const result = await check(request);
    assert.equal(result.ok, false, `expected refusal ${code}`);
    assert.equal(result.code, code, result.reason);
  }

  test('a token made by nostr-tools for this request is accepted, once', async () => {
    const sk = secretKeyBytes(secret);
    const token = await getToken(URL_, 'post', (e) => finalizeEvent({ ...e, created_at: NOW }, sk), true, { types: ['like'] });
    const replay = memoryReplay();
    const body = Buffer.from(JSON.stringify({ types: ['like'] }));
    const first = await check({ authorization: token, body }, replay);
    assert.deepEqual(first.ok && first.pubkey, pubkey);
    const second = await check({ authorization: token, body }, replay);
    assert.equal(second.ok, false);
    assert.equal(second.code, 'replayed');
  });

  test('a request without a body needs no payload tag', async () => {
    const result = await check({ method: 'GET', body: undefined, authorization: header(authEvent(secret, { method: 'GET' })) });
    assert.equal(result.ok, true);
  });

  test('created_at exactly at the window edges passes, one second past fails', async () => {
    for (const createdAt of [NOW - NIP98_MAX_SKEW_SECS, NOW + NIP98_MAX_SKEW_SECS]) {
      const result = await check({ authorization: header(authEvent(secret, { createdAt, payload: BODY_HASH })) });
      assert.equal(result.ok, true, `created_at ${createdAt}`);
    }
  });

  const ok = (shape: AuthShape = {}) => header(authEvent(secret, { payload: BODY_HASH, ...shape }));

  test('a missing header', () => refused({ authorization: undefined }, 'missing'));
  test('a Bearer header', () => refused({ authorization: 'Bearer abc' }, 'malformed'));
  test('base64 that is not JSON', () => refused({ authorization: `Nostr ${Buffer.from('nope').toString('base64')}` }, 'malformed'));
  test('JSON that is not an event', () => refused({ authorization: `Nostr ${Buffer.from('{"kind":1}').toString('base64')}` }, 'malformed'));
  test('an oversized header', () => refused({ authorization: `Nostr ${'A'.repeat(20_000)}` }, 'malformed'));
  test('the wrong kind', () => refused({ authorization: ok({ kind: 1 }) }, 'wrong-kind'));
  test('created_at too old', () => refused({ authorization: ok({ createdAt: NOW - NIP98_MAX_SKEW_SECS - 1 }) }, 'stale'));
  test('created_at in the future', () => refused({ authorization: ok({ createdAt: NOW + NIP98_MAX_SKEW_SECS + 1 }) }, 'stale'));
  test('no u tag', () => refused({ authorization: ok({ url: null }) }, 'url-mismatch'));
  test('a relative u', () => refused({ authorization: ok({ url: '/v1/inbox/counts?x=1' }) }, 'url-mismatch'));
  test('another URL', () => refused({ authorization: ok({ url: 'https://push.example.com/v1/inbox/counts' }) }, 'url-mismatch'));
  test('no method tag', () => refused({ authorization: ok({ method: null }) }, 'method-mismatch'));
  test('another method', () => refused({ authorization: ok({ method: 'PUT' }) }, 'method-mismatch'));
  test('a body without payload tag', () => refused({ authorization: header(authEvent(secret)) }, 'payload-mismatch'));
  test('a payload tag of another body', () => refused({ authorization: ok({ payload: '00'.repeat(32) }) }, 'payload-mismatch'));
  test('a forged signature', () => {
    const event = authEvent(secret, { payload: BODY_HASH });
    const forged = { ...event, sig: event.sig.replace(/^./, event.sig.startsWith('0') ? '1' : '0') };
    return refused({ authorization: header(forged) }, 'bad-signature');
  });
  test('a tampered event whose id no longer matches', () => {
    const event = authEvent(secret, { payload: BODY_HASH });
    return refused({ authorization: header({ ...event, tags: [...event.tags, ['x', 'y']] }) }, 'bad-signature');
  });
  test('a refused request does not burn the auth event', async () => {
    const replay = memoryReplay();
    const auth = ok();
    const wrongBody = await check({ authorization: auth, body: Buffer.from('other') }, replay);
    assert.equal(wrongBody.ok, false);
    const right = await check({ authorization: auth }, replay);
    assert.equal(right.ok, true);
  });
});
