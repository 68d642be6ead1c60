import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
// Each nostr-tools entry point bundles its own copy of core.ts, so each has its own symbol.
import { verifiedSymbol as pureVerifiedSymbol, verifyEvent as pureVerifyEvent } from 'nostr-tools/pure';
import { verifiedSymbol as wasmVerifiedSymbol } from 'nostr-tools/wasm';
import {
  DEFAULT_EVENT_LIMITS,
  MAX_CONTENT_BYTES,
  MAX_EVENT_TAGS,
  createEventVerifier,
  isEventRejection,
  parseEvent,
  type EventRejectionCode,
  type EventVerifier,
  type NostrEvent,
} from './event.ts';
import { generateSecretKey, signEvent } from './keys.ts';
import { availableSecp256k1Backends, defaultSecp256k1 } from './secp256k1.ts';

const secret = generateSecretKey();

function signed(content = 'hello', tags: string[][] = [['p', 'a'.repeat(64)]]): NostrEvent {
  return signEvent({ kind: 1, created_at: 1_700_000_000, tags, content }, secret);
}

function flipHex(hex: string, index: number): string {
  const c = hex[index] === '0' ? '1' : '0';
  return hex.slice(0, index) + c + hex.slice(index + 1);
}

function parsed(value: unknown): NostrEvent {
  const result = parseEvent(value);
  if (isEventRejection(result)) assert.fail(`unexpected rejection: ${result.code} ${result.message}`);
  return result;
}

function rejectionCode(value: unknown, limits = DEFAULT_EVENT_LIMITS): EventRejectionCode {
  const result = parseEvent(value, limits);
  if (!isEventRejection(result)) assert.fail('expected a rejection');
  return result.code;
}

describe('parseEvent', () => {
  test('accepts a well-formed event and returns a fresh object with only the NIP-01 fields', () => {
    const event = signed();
    const input = { ...event, extra: 'dropped', seenOn: ['wss://x'] };
    const result = parsed(input);
    assert.deepEqual(result, event);
    assert.notEqual(result, input);
    assert.notEqual(result.tags, event.tags);
    assert.notEqual(result.tags[0], event.tags[0]);
    assert.deepEqual(Object.keys(result).sort(), ['content', 'created_at', 'id', 'kind', 'pubkey', 'sig', 'tags']);
  });

  test('drops a verified flag pre-set on untrusted input', () => {
    const forged = { ...signed(), content: 'tampered', [pureVerifiedSymbol]: true };
    const result = parsed(forged);
    assert.equal(Object.getOwnPropertySymbols(result).length, 0);
    // Why it matters: nostr-tools' pure verifier trusts the flag without checking anything.
    assert.equal(pureVerifyEvent(forged), true);
    assert.equal(pureVerifyEvent(result), false);
  });

  const valid = signed();
  const cases: Array<[string, unknown, EventRejectionCode]> = [
    ['null', null, 'not-object'],
    ['a string', JSON.stringify(valid), 'not-object'],
    ['an array', [valid], 'not-object'],
    ['a missing id', { ...valid, id: undefined }, 'bad-id'],
    ['an uppercase id', { ...valid, id: valid.id.toUpperCase() }, 'bad-id'],
    ['a short id', { ...valid, id: valid.id.slice(2) }, 'bad-id'],
    ['a non-hex pubkey', { ...valid, pubkey: 'g'.repeat(64) }, 'bad-pubkey'],
    ['an npub as pubkey', { ...valid, pubkey: 'npub1' + 'q'.repeat(58) }, 'bad-pubkey'],
    ['a 64-hex sig', { ...valid, sig: valid.sig.slice(0, 64) }, 'bad-sig'],
    ['a numeric sig', { ...valid, sig: 5 }, 'bad-sig'],
    ['a string kind', { ...valid, kind: '1' }, 'bad-kind'],
    ['a fractional kind', { ...valid, kind: 1.5 }, 'bad-kind'],
    ['a negative kind', { ...valid, kind: -1 }, 'bad-kind'],
    ['kind 65536', { ...valid, kind: 65_536 }, 'bad-kind'],
    ['a string created_at', { ...valid, created_at: '1700000000' }, 'bad-created-at'],
    ['a fractional created_at', { ...valid, created_at: 1.5 }, 'bad-created-at'],
    ['a negative created_at', { ...valid, created_at: -1 }, 'bad-created-at'],
    ['an unsafe created_at', { ...valid, created_at: 2 ** 60 }, 'bad-created-at'],
    ['missing content', { ...valid, content: undefined }, 'bad-content'],
    ['object content', { ...valid, content: {} }, 'bad-content'],
    ['tags as an object', { ...valid, tags: {} }, 'bad-tags'],
    ['a tag that is a string', { ...valid, tags: ['p'] }, 'bad-tags'],
    ['a tag holding a number', { ...valid, tags: [['p', 1]] }, 'bad-tags'],
    ['a tag holding null', { ...valid, tags: [['p', null]] }, 'bad-tags'],
  ];
  for (const [name, value, code] of cases) {
    test(`rejects ${name} with ${code}`, () => {
      assert.equal(rejectionCode(value), code);
    });
  }

  test('accepts kind 65535, created_at 0, empty tags and an empty tag', () => {
    assert.equal(parsed({ ...valid, kind: 65_535 }).kind, 65_535);
    assert.equal(parsed({ ...valid, created_at: 0 }).created_at, 0);
    assert.deepEqual(parsed({ ...valid, tags: [] }).tags, []);
    assert.deepEqual(parsed({ ...valid, tags: [[]] }).tags, [[]]);
  });

  test('bounds the number of tags', () => {
    const atLimit = Array.from({ length: MAX_EVENT_TAGS }, () => ['t', 'x']);
    assert.equal(parsed({ ...valid, tags: atLimit }).tags.length, MAX_EVENT_TAGS);
    assert.equal(rejectionCode({ ...valid, tags: [...atLimit, ['t', 'x']] }), 'too-many-tags');
  });

  test('bounds the elements of one tag and the characters of all tags', () => {
    const limits = { ...DEFAULT_EVENT_LIMITS, maxElementsPerTag: 3, maxTagsTotalChars: 10 };
    assert.equal(rejectionCode({ ...valid, tags: [['a', 'b', 'c', 'd']] }, limits), 'tag-too-large');
    assert.equal(rejectionCode({ ...valid, tags: [['aaaaa'], ['bbbbbb']] }, limits), 'tag-too-large');
    assert.equal(isEventRejection(parseEvent({ ...valid, tags: [['aaaaa'], ['bbbbb']] }, limits)), false);
  });

  test('bounds content in UTF-8 bytes, not characters', () => {
    assert.equal(parsed({ ...valid, content: 'a'.repeat(MAX_CONTENT_BYTES) }).content.length, MAX_CONTENT_BYTES);
    assert.equal(rejectionCode({ ...valid, content: 'a'.repeat(MAX_CONTENT_BYTES + 1) }), 'content-too-large');
    // 'é' is 2 bytes: half the limit in characters is exactly the limit in bytes.
    const twoByte = 'é'.repeat(MAX_CONTENT_BYTES / 2);
    assert.equal(isEventRejection(parseEvent({ ...valid, content: twoByte })), false);
    assert.equal(rejectionCode({ ...valid, content: twoByte + 'a' }), 'content-too-large');
  });

  test('a rejection message names the field without echoing the input', () => {
    const result = parseEvent({ ...valid, pubkey: 'x'.repeat(10_000) });
    assert.ok(isEventRejection(result));
    assert.ok(result.message.length < 100, result.message);
  });
});

test("the default EventVerifier uses this thread's secp256k1 backend and verifies", async () => {
  const verifier = await createEventVerifier();
  const event = signed();
  assert.equal(verifier.verify(parsed(event)), true);
  assert.equal(verifier.verify(parsed({ ...event, sig: flipHex(event.sig, 5) })), false);
  assert.equal(defaultSecp256k1().verifySchnorrHex(event.id, event.pubkey, event.sig), true);
});

// The same checks against every backend this machine has (native and WASM where the addon is built).
for (const backend of availableSecp256k1Backends())
  describe(`the EventVerifier: node sha256 + ${backend.name}`, () => {
    let verifier: EventVerifier;
    before(async () => {
      verifier = await createEventVerifier(backend);
    });

    test('accepts a valid event', () => {
      assert.equal(verifier.verify(parsed(signed())), true);
    });

    test('accepts events whose content and tags need JSON escaping', () => {
      const content = 'line\nquote" back\\ tab\t ctrl\u0001 emoji 🎉 nul\u0000';
      assert.equal(
        verifier.verify(
          parsed(
            signed(content, [
              ['t', 'ü\n"'],
              ['e', '', ''],
            ]),
          ),
        ),
        true,
      );
    });

    test('a second verifier on the same backend verifies too', async () => {
      const again = await createEventVerifier(backend);
      assert.equal(again.verify(parsed(signed())), true);
    });

    test('a signature of the wrong length (never from parseEvent) is false, not a throw', () => {
      // The id still matches (the signature is not hashed), so this reaches the backend's TypeError.
      const event = signed();
      assert.equal(verifier.verify({ ...event, sig: event.sig.slice(2) }), false);
    });

    test('rejects a tampered id', () => {
      const event = signed();
      assert.equal(verifier.verify(parsed({ ...event, id: flipHex(event.id, 10) })), false);
    });

    test('rejects a tampered signature', () => {
      const event = signed();
      assert.equal(verifier.verify(parsed({ ...event, sig: flipHex(event.sig, 100) })), false);
    });

    test('rejects new content under the original id and signature (the id is recomputed)', () => {
      // The signature is valid for this id and pubkey, so only the id check can catch this.
      const event = signed();
      assert.equal(verifier.verify(parsed({ ...event, content: 'tampered' })), false);
      assert.equal(verifier.verify(parsed({ ...event, tags: [] })), false);
      assert.equal(verifier.verify(parsed({ ...event, created_at: event.created_at + 1 })), false);
      assert.equal(verifier.verify(parsed({ ...event, kind: 7 })), false);
    });

    test('rejects another key claiming the event', () => {
      const other = signEvent({ kind: 1, created_at: 1, tags: [], content: 'x' }, generateSecretKey());
      assert.equal(verifier.verify(parsed({ ...signed(), pubkey: other.pubkey })), false);
    });

    test('is not fooled by a verified flag set on the object it is given', () => {
      const forged = Object.assign({ ...parsed(signed()), content: 'tampered' }, { [wasmVerifiedSymbol]: true });
      assert.equal(verifier.verify(forged), false);
    });

    test('agrees with nostr-tools’ own verifier on signed and tampered events', () => {
      for (let i = 0; i < 100; i++) {
        const event = signed(`content ${i} ${'é'.repeat(i % 7)}`, [
          ['p', 'ab'.repeat(32)],
          ['t', `tag\n${i}`],
        ]);
        const tampered = i % 2 === 0 ? { ...event, content: `${event.content}!` } : { ...event, sig: flipHex(event.sig, i % 128) };
        for (const candidate of [event, tampered])
          assert.equal(verifier.verify(parsed(candidate)), pureVerifyEvent({ ...candidate }), JSON.stringify(candidate));
      }
    });

    test('rejects an event claiming a pubkey that is not on the curve', () => {
      // x = 0 has no point on secp256k1 (a twist point in the NIP-44 vectors).
      assert.equal(verifier.verify(parsed({ ...signed(), pubkey: '0'.repeat(64) })), false);
    });
  });
