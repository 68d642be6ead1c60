/**
 * What the package signs, checked by the server's own code: a 3079/3080/3083 built with any
 * signer of the NIP-07 shape verifies, is `p`-tagged to the service, and its content decrypts with
 * the service's key to a payload the server's parser accepts; a NIP-98 header passes the server's
 * verifier for its request (URL, method, body hash) and fails for another body; two headers for the
 * same request in the same second differ (the nonce), so the replay guard accepts both.
 */
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { finalizeEvent } from 'nostr-tools/pure';
import * as nip44 from 'nostr-tools/nip44';
import { hexToBytes } from 'nostr-tools/utils';
import { parsePreferencesPayload, parseQuietHoursPayload, parseTokenPayload } from '../../../src/engine/control-payloads.ts';
import { DEREGISTER_TOKEN, PREFERENCES, REGISTER_TOKEN } from '../../../src/nostr/kinds.ts';
import { createEventVerifier, type EventVerifier, type NostrEvent } from '../../../src/nostr/event.ts';
import { decryptNip44, getConversationKey } from '../../../src/nostr/nip44.ts';
import { verifyNip98 } from '../../../src/nostr/nip98.ts';
import { makeUser } from '../../../test/support/nostr-client.ts';
import {
  KIND_DEREGISTER_DEVICE,
  KIND_PREFERENCES,
  KIND_REGISTER_DEVICE,
  deregistrationEvent,
  localSigner,
  nip98Authorization,
  preferencesEvent,
  registrationEvent,
  type NostrSigner,
} from '../src/index.ts';

const service = makeUser();
const user = makeUser();

/** A signer as a NIP-07 extension exposes one (`window.nostr`), written against nostr-tools directly. */
function extensionShapedSigner(secretHex: string): NostrSigner {
  const secret = hexToBytes(secretHex);
  return {
    signEvent: async (template) => finalizeEvent(template, secret),
    nip44: { encrypt: async (pubkey, plaintext) => nip44.encrypt(plaintext, nip44.getConversationKey(secret, pubkey)) },
  };
}

function decrypted(event: NostrEvent): string {
  return decryptNip44(event.content, getConversationKey(service.secret, event.pubkey));
}

describe('control events built by the package', () => {
  let verifier: EventVerifier;
  before(async () => {
    verifier = await createEventVerifier();
  });

  for (const [name, signer] of [
    ['localSigner', localSigner(user.secret)],
    ['a NIP-07-shaped signer', extensionShapedSigner(user.secret)],
  ] as const) {
    test(`with ${name}: 3079, 3080 and 3083 verify, name the service, and decrypt to payloads the server accepts`, async () => {
      const options = { servicePubkey: service.pubkey, createdAt: 1_767_225_600, tags: [['client', 'test']] };
      const registration = await registrationEvent(signer, { token: 'fcm-token-1', transport: 'fcm', locale: 'pt_BR' }, options);
      const removal = await deregistrationEvent(signer, 'fcm-token-1', options);
      const preferences = await preferencesEvent(signer, { kinds: [7, 34236], quietHours: { start: '22:00', end: '07:00' } }, options);

      assert.deepEqual(
        [registration.kind, removal.kind, preferences.kind],
        [REGISTER_TOKEN, DEREGISTER_TOKEN, PREFERENCES],
        'the kinds the server reads',
      );
      assert.deepEqual([KIND_REGISTER_DEVICE, KIND_DEREGISTER_DEVICE, KIND_PREFERENCES], [REGISTER_TOKEN, DEREGISTER_TOKEN, PREFERENCES]);
      for (const event of [registration, removal, preferences]) {
        assert.equal(event.pubkey, user.pubkey);
        assert.equal(event.created_at, 1_767_225_600);
        assert.deepEqual(event.tags, [
          ['p', service.pubkey],
          ['client', 'test'],
        ]);
        assert.ok(verifier.verify(event), 'signature and id verify');
        assert.notEqual(event.content.trim()[0], '{', 'the content is not plaintext');
      }

      const device = parseTokenPayload(decrypted(registration));
      assert.deepEqual(device, { ok: true, value: { token: 'fcm-token-1', transport: 'fcm', locale: 'pt-BR' } });
      assert.deepEqual(parseTokenPayload(decrypted(removal)), { ok: true, value: { token: 'fcm-token-1', transport: 'fcm' } });
      assert.deepEqual(parsePreferencesPayload(decrypted(preferences)), {
        ok: true,
        value: { kinds: [7, 34236], campaignsEnabled: false },
      });
      const quiet = parseQuietHoursPayload(decrypted(preferences));
      assert.ok(quiet.ok && quiet.value !== null);
      assert.equal(quiet.value.startMinute, 22 * 60);
    });
  }

  test('a service pubkey that is not 64 hex characters is refused before anything is signed', async () => {
    let signed = 0;
    const counting: NostrSigner = {
      signEvent: (template) => ((signed += 1), localSigner(user.secret).signEvent(template)),
      nip44: localSigner(user.secret).nip44,
    };
    await assert.rejects(registrationEvent(counting, { token: 't' }, { servicePubkey: 'npub1notahexkey' }), /64-character hex/);
    assert.equal(signed, 0);
  });

  test('localSigner refuses a key that is not 32 bytes', () => {
    assert.throws(() => localSigner('abcd'), /32 bytes/);
  });
});

describe('NIP-98 headers built by the package', () => {
  let verifier: EventVerifier;
  const claimed = new Set<string>();
  const replay = (id: string) => Promise.resolve(claimed.has(id) ? false : (claimed.add(id), true));
  before(async () => {
    verifier = await createEventVerifier();
  });
  const signer = localSigner(user.secret);
  const url = 'https://push.example.com/v1/preferences?x=1';
  const body = JSON.stringify({ kinds: [7], note: 'é' });
  const check = (authorization: string, requestBody: string) =>
    verifyNip98(
      { method: 'PUT', url, authorization, body: new TextEncoder().encode(requestBody) },
      { nowSecs: Math.floor(Date.now() / 1000), verifier, replay },
    );

  test("pass the server's check for their URL, method and body, and two for one request are both good once", async () => {
    const first = await nip98Authorization(signer, { url, method: 'put', body });
    const second = await nip98Authorization(signer, { url, method: 'PUT', body });
    assert.notEqual(first, second, 'the nonce tells them apart');
    const results = [await check(first, body), await check(second, body)];
    assert.deepEqual(
      results.map((r) => (r.ok ? r.pubkey : r.reason)),
      [user.pubkey, user.pubkey],
    );
    const again = await check(first, body);
    assert.equal(again.ok ? 'accepted' : again.code, 'replayed');
  });

  test('fail for another body than the one hashed', async () => {
    const authorization = await nip98Authorization(signer, { url, method: 'PUT', body });
    const result = await check(authorization, body.replace('7', '8'));
    assert.equal(result.ok ? 'accepted' : result.code, 'payload-mismatch');
  });
});
