import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createECDH, randomBytes } from 'node:crypto';
import * as ece from 'http_ece';
import { encryptAes128gcm, HEADER_BYTES, MAX_PLAINTEXT_BYTES, WebPushEncryptionError } from './encrypt.ts';

/** RFC 8291 §5 and Appendix A, base64url without padding. */
const RFC8291 = {
  plaintext: 'When I grow up, I want to be a watermelon',
  asPublic: 'BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8',
  asPrivate: 'yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw',
  uaPublic: 'BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4',
  uaPrivate: 'q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94',
  salt: 'DGv6ra1nlYgDCS1FRnbzlw',
  authSecret: 'BTBZMqHH6r4Tts7J_aSIgg',
  header: 'DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8',
  ciphertext: '8pfeW0KbunFT06SuDKoJH9Ql87S1QUrdirN6GcG7sFz1y1sqLgVi1VhjVkHsUoEsbI_0LpXMuGvnzQ',
  body: 'DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN',
};
const b64u = (s: string): Buffer => Buffer.from(s, 'base64url');

function userAgent(): { ecdh: ReturnType<typeof createECDH>; p256dh: string; auth: string } {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { ecdh, p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') };
}

describe('encryptAes128gcm', () => {
  test('reproduces the RFC 8291 §5 example byte for byte (144 bytes, not the 145 the RFC prints)', () => {
    const body = encryptAes128gcm(
      Buffer.from(RFC8291.plaintext, 'utf8'),
      { p256dh: RFC8291.uaPublic, auth: RFC8291.authSecret },
      { salt: b64u(RFC8291.salt), localKeys: { privateKey: b64u(RFC8291.asPrivate), publicKey: b64u(RFC8291.asPublic) } },
    );
    assert.equal(body.length, 144);
    assert.equal(body.subarray(0, HEADER_BYTES).toString('base64url'), RFC8291.header);
    assert.equal(body.subarray(HEADER_BYTES).toString('base64url'), RFC8291.ciphertext);
    assert.equal(body.toString('base64url'), RFC8291.body);
  });

  test('the RFC example decrypts with the user agent private key (http_ece)', () => {
    const body = encryptAes128gcm(
      Buffer.from(RFC8291.plaintext),
      { p256dh: RFC8291.uaPublic, auth: RFC8291.authSecret },
      { salt: b64u(RFC8291.salt), localKeys: { privateKey: b64u(RFC8291.asPrivate) } },
    );
    const ua = createECDH('prime256v1');
    ua.setPrivateKey(b64u(RFC8291.uaPrivate));
    assert.equal(
      ece.decrypt(body, { version: 'aes128gcm', privateKey: ua, authSecret: RFC8291.authSecret }).toString('utf8'),
      RFC8291.plaintext,
    );
  });

  test('random payloads from 0 to 3993 bytes round-trip through http_ece, each with a fresh key and salt', () => {
    const ua = userAgent();
    const sizes = [0, 1, 2, 15, 16, 17, 100, 1000, 2048, 3992, MAX_PLAINTEXT_BYTES];
    for (let i = 0; i < 20; i++) sizes.push(Math.floor(Math.random() * (MAX_PLAINTEXT_BYTES + 1)));
    let previous: Buffer | null = null;
    for (const size of sizes) {
      const plaintext = randomBytes(size);
      const body = encryptAes128gcm(plaintext, ua);
      assert.equal(body.length, HEADER_BYTES + size + 1 + 16);
      assert.ok(body.length <= 4096);
      assert.deepEqual(ece.decrypt(body, { version: 'aes128gcm', privateKey: ua.ecdh, authSecret: ua.auth }), plaintext);
      if (previous) assert.notDeepEqual(body.subarray(0, 16), previous.subarray(0, 16), 'a fresh salt per message');
      previous = body;
    }
  });

  test('padding is hidden inside the record and stripped by the receiver', () => {
    const ua = userAgent();
    const body = encryptAes128gcm(Buffer.from('{"a":"b"}'), ua, { paddingBytes: 100 });
    assert.equal(body.length, HEADER_BYTES + 9 + 1 + 100 + 16);
    assert.equal(ece.decrypt(body, { version: 'aes128gcm', privateKey: ua.ecdh, authSecret: ua.auth }).toString(), '{"a":"b"}');
  });

  test('3994 bytes, or 3993 plus padding, is too large for one push', () => {
    const ua = userAgent();
    const tooLarge = (fn: () => unknown) =>
      assert.throws(fn, (err: unknown) => err instanceof WebPushEncryptionError && err.code === 'too_large');
    tooLarge(() => encryptAes128gcm(Buffer.alloc(MAX_PLAINTEXT_BYTES + 1), ua));
    tooLarge(() => encryptAes128gcm(Buffer.alloc(MAX_PLAINTEXT_BYTES), ua, { paddingBytes: 1 }));
  });

  test('malformed subscription keys are typed errors, never crashes', () => {
    const ua = userAgent();
    const code = (fn: () => unknown, expected: string) =>
      assert.throws(fn, (err: unknown) => err instanceof WebPushEncryptionError && err.code === expected);
    code(() => encryptAes128gcm(Buffer.from('x'), { ...ua, p256dh: 'not base64!' }), 'bad_p256dh');
    code(() => encryptAes128gcm(Buffer.from('x'), { ...ua, p256dh: ua.p256dh.slice(0, 40) }), 'bad_p256dh');
    // 65 bytes that start with 0x04 but are not on the curve.
    code(
      () =>
        encryptAes128gcm(Buffer.from('x'), { ...ua, p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]).toString('base64url') }),
      'bad_p256dh',
    );
    code(() => encryptAes128gcm(Buffer.from('x'), { ...ua, p256dh: Buffer.alloc(65, 3).toString('base64url') }), 'bad_p256dh');
    code(() => encryptAes128gcm(Buffer.from('x'), { ...ua, auth: 'AAAA' }), 'bad_auth');
    code(() => encryptAes128gcm(Buffer.from('x'), ua, { salt: Buffer.alloc(8) }), 'bad_salt');
    code(() => encryptAes128gcm(Buffer.from('x'), ua, { localKeys: { privateKey: Buffer.alloc(32) } }), 'bad_local_keys');
  });

  test('padded and standard base64 keys are accepted (some clients send them)', () => {
    const ua = userAgent();
    const standard = Buffer.from(ua.p256dh, 'base64url').toString('base64');
    const auth = Buffer.from(ua.auth, 'base64url').toString('base64');
    const body = encryptAes128gcm(Buffer.from('hi'), { p256dh: standard, auth });
    assert.equal(ece.decrypt(body, { version: 'aes128gcm', privateKey: ua.ecdh, authSecret: ua.auth }).toString(), 'hi');
  });
});
