import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import webpush from 'web-push';
import { ManualClock } from '../../util/clock.ts';
import { verifyVapidHeader } from '../../../test/support/webpush-fake.ts';
import {
  generateVapidKeyPair,
  signVapidJwt,
  vapidAudience,
  VapidKeyError,
  vapidKeyPairFromPrivate,
  VapidSigner,
  VAPID_JWT_LIFETIME_SECS,
} from './vapid.ts';
import { resolveVapidKeys, VAPID_KEY_FILE } from './vapid-key.ts';

const nowSecs = (clock: ManualClock) => Math.floor(clock.nowMs() / 1000);
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;

describe('VAPID (RFC 8292)', () => {
  test('the JWT is ES256 over {"typ":"JWT","alg":"ES256"}, verified by node:crypto with the k= key; aud, exp ≤ 24 h, sub', () => {
    const clock = new ManualClock();
    const keys = generateVapidKeyPair();
    const signer = new VapidSigner({ keys, subject: 'mailto:ops@example.org', clock });
    const header = signer.authorizationFor('https://updates.push.services.mozilla.com/wpush/v2/abc?x=1');
    const check = verifyVapidHeader(header, 'https://updates.push.services.mozilla.com', nowSecs(clock), 'mailto:ops@example.org');
    assert.deepEqual(check.problems, []);
    assert.equal(check.publicKey, keys.publicKey.toString('base64url'));
    assert.equal(check.claims?.exp, nowSecs(clock) + VAPID_JWT_LIFETIME_SECS);
    assert.ok(check.claims.exp - nowSecs(clock) <= 24 * 3600);
  });

  test('the verifier accepts what web-push itself signs (so it checks the real format)', () => {
    const pair = webpush.generateVAPIDKeys();
    const { Authorization } = webpush.getVapidHeaders('https://push.example', 'mailto:a@b.c', pair.publicKey, pair.privateKey, 'aes128gcm');
    assert.deepEqual(verifyVapidHeader(Authorization, 'https://push.example', Math.floor(Date.now() / 1000), 'mailto:a@b.c').problems, []);
  });

  test('a tampered payload or a foreign key fails verification', () => {
    const clock = new ManualClock();
    const keys = generateVapidKeyPair();
    const jwt = signVapidJwt({ aud: 'https://push.example', exp: nowSecs(clock) + 60, sub: 'mailto:a@b.c' }, keys);
    const [h, , s] = jwt.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ aud: 'https://push.example', exp: nowSecs(clock) + 60, sub: 'mailto:x@y.z' })).toString('base64url')}.${s}`;
    assert.equal(
      verifyVapidHeader(`vapid t=${forged}, k=${keys.publicKey.toString('base64url')}`, 'https://push.example', nowSecs(clock)).ok,
      false,
    );
    const other = generateVapidKeyPair();
    assert.equal(
      verifyVapidHeader(`vapid t=${jwt}, k=${other.publicKey.toString('base64url')}`, 'https://push.example', nowSecs(clock)).ok,
      false,
    );
  });

  test('the audience is the endpoint origin: scheme, host and a non-default port', () => {
    assert.equal(vapidAudience('https://fcm.googleapis.com/fcm/send/abc'), 'https://fcm.googleapis.com');
    assert.equal(vapidAudience('https://push.example:443/x'), 'https://push.example');
    assert.equal(vapidAudience('http://127.0.0.1:8080/up123?up=1'), 'http://127.0.0.1:8080');
  });

  test('one JWT per audience is reused until an hour before it expires, then re-signed', () => {
    const clock = new ManualClock();
    const signer = new VapidSigner({ keys: generateVapidKeyPair(), subject: 'mailto:a@b.c', clock });
    const first = signer.authorizationFor('https://a.example/1');
    assert.equal(signer.authorizationFor('https://a.example/2'), first);
    assert.notEqual(signer.authorizationFor('https://b.example/1'), first);
    clock.advance((VAPID_JWT_LIFETIME_SECS - 3601) * 1000);
    assert.equal(signer.authorizationFor('https://a.example/1'), first);
    clock.advance(2000);
    const renewed = signer.authorizationFor('https://a.example/1');
    assert.notEqual(renewed, first);
    const jwt = /t=([^,]+)/.exec(renewed)?.[1] as string;
    assert.equal(claimsOf(jwt).exp, nowSecs(clock) + VAPID_JWT_LIFETIME_SECS);
  });

  test('an empty subject leaves sub out', () => {
    const clock = new ManualClock();
    const header = new VapidSigner({ keys: generateVapidKeyPair(), subject: '', clock }).authorizationFor('https://a.example/x');
    const jwt = /t=([^,]+)/.exec(header)?.[1] as string;
    assert.equal('sub' in claimsOf(jwt), false);
  });

  test('keys from web-push generateVAPIDKeys are accepted, and a mismatched public key is refused', () => {
    const pair = webpush.generateVAPIDKeys();
    const keys = vapidKeyPairFromPrivate(Buffer.from(pair.privateKey, 'base64url'), Buffer.from(pair.publicKey, 'base64url'));
    assert.equal(keys.publicKey.toString('base64url'), pair.publicKey);
    assert.throws(
      () => vapidKeyPairFromPrivate(Buffer.from(pair.privateKey, 'base64url'), generateVapidKeyPair().publicKey),
      VapidKeyError,
    );
    assert.throws(() => vapidKeyPairFromPrivate(Buffer.alloc(31)), VapidKeyError);
    assert.throws(() => vapidKeyPairFromPrivate(Buffer.alloc(32)), VapidKeyError);
  });
});

describe('resolveVapidKeys', () => {
  const withDir = (fn: (dir: string) => void) => {
    const dir = mkdtempSync(join(tmpdir(), 'np-vapid-'));
    try {
      fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const none = { vapid_private_key: '', vapid_public_key: '' };

  test('generated on first start (mode 0600, web-push JSON shape), then kept across restarts', () =>
    withDir((dir) => {
      const first = resolveVapidKeys(none, join(dir, 'data'));
      assert.equal(first.source, 'generated');
      const file = join(dir, 'data', VAPID_KEY_FILE);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const stored = JSON.parse(readFileSync(file, 'utf8')) as { publicKey: string; privateKey: string };
      assert.equal(stored.publicKey, first.publicKey.toString('base64url'));
      const second = resolveVapidKeys(none, join(dir, 'data'));
      assert.equal(second.source, 'data_dir');
      assert.deepEqual(second.publicKey, first.publicKey);
      assert.deepEqual(second.privateKey, first.privateKey);
    }));

  test('configured keys win over the data directory and are checked against each other', () =>
    withDir((dir) => {
      const pair = webpush.generateVAPIDKeys();
      const configured = resolveVapidKeys({ vapid_private_key: pair.privateKey, vapid_public_key: pair.publicKey }, dir);
      assert.equal(configured.source, 'config');
      assert.equal(configured.publicKey.toString('base64url'), pair.publicKey);
      assert.equal(
        resolveVapidKeys({ vapid_private_key: pair.privateKey, vapid_public_key: '' }, dir).publicKey.toString('base64url'),
        pair.publicKey,
      );
      const other = webpush.generateVAPIDKeys();
      assert.throws(
        () => resolveVapidKeys({ vapid_private_key: pair.privateKey, vapid_public_key: other.publicKey }, dir),
        /does not belong/,
      );
      assert.throws(
        () => resolveVapidKeys({ vapid_private_key: '', vapid_public_key: pair.publicKey }, dir),
        /without webpush.vapid_private_key/,
      );
      assert.throws(() => resolveVapidKeys({ vapid_private_key: 'short', vapid_public_key: '' }, dir), VapidKeyError);
    }));

  test('a damaged key file is a clear error, not a new key', () =>
    withDir((dir) => {
      writeFileSync(join(dir, VAPID_KEY_FILE), 'garbage');
      assert.throws(() => resolveVapidKeys(none, dir), /remove it to generate a new VAPID key/);
      writeFileSync(join(dir, VAPID_KEY_FILE), JSON.stringify({ publicKey: 'x' }));
      assert.throws(() => resolveVapidKeys(none, dir), /remove it/);
    }));
});

test('a generated VAPID private key is always 32 bytes, even when its scalar starts with zero bytes', () => {
  // One scalar in 256 has a leading zero byte that ECDH.getPrivateKey drops; 3,000 draws miss
  // such a scalar with probability below 10^-5.
  for (let i = 0; i < 3000; i++) {
    const pair = generateVapidKeyPair();
    assert.equal(pair.privateKey.length, 32);
    assert.equal(pair.publicKey.length, 65);
  }
});
