import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NostrEvent } from '../nostr/event.ts';
import { coalesceTarget, referenceFields } from './references.ts';

const ACTOR = 'a'.repeat(64);
const OWNER = 'b'.repeat(64);
const PARENT_AUTHOR = 'c'.repeat(64);
const VIDEO_ID = '1'.repeat(64);
const PARENT_ID = '2'.repeat(64);
const NOTE_ID = '3'.repeat(64);
const TRIGGER_ID = 'f'.repeat(64);

function event(kind: number, tags: string[][], overrides: Partial<NostrEvent> = {}): NostrEvent {
  return { id: TRIGGER_ID, pubkey: ACTOR, created_at: 1_712_345_678, kind, tags, content: '', sig: '0'.repeat(128), ...overrides };
}

describe('referenceFields', () => {
  test('a like with e, a, p and k tags yields all five fields, the owner taken from the a tag', () => {
    const like = event(7, [
      ['e', VIDEO_ID],
      ['a', `34236:${OWNER}:my-vine-id`],
      ['p', PARENT_AUTHOR],
      ['k', '34236'],
    ]);
    assert.deepEqual(referenceFields(like), {
      referencedEventId: VIDEO_ID,
      referencedAddress: `34236:${OWNER}:my-vine-id`,
      referencedKind: '34236',
      referencedAuthorPubkey: OWNER,
      referencedDTag: 'my-vine-id',
    });
  });

  test('NIP-22 E/A/K/e/k tags anchor to the root video, not the parent comment', () => {
    const reply = event(1111, [
      ['E', VIDEO_ID, '', OWNER],
      ['A', `34236:${OWNER}:root-d`],
      ['K', '34236'],
      ['P', OWNER],
      ['e', PARENT_ID, '', PARENT_AUTHOR],
      ['k', '1111'],
      ['p', PARENT_AUTHOR],
    ]);
    const fields = referenceFields(reply);
    assert.equal(fields.referencedEventId, VIDEO_ID);
    assert.equal(fields.referencedAddress, `34236:${OWNER}:root-d`);
    assert.equal(fields.referencedAuthorPubkey, OWNER);
  });

  test('uppercase tags win regardless of their position', () => {
    const reply = event(1111, [
      ['e', PARENT_ID],
      ['a', `34236:${PARENT_AUTHOR}:other`],
      ['E', VIDEO_ID],
      ['A', `34236:${OWNER}:root-d`],
    ]);
    const fields = referenceFields(reply);
    assert.equal(fields.referencedEventId, VIDEO_ID);
    assert.equal(fields.referencedAddress, `34236:${OWNER}:root-d`);
  });

  test('an e tag alone yields only referencedEventId', () => {
    assert.deepEqual(
      referenceFields(
        event(7, [
          ['e', NOTE_ID],
          ['p', OWNER],
        ]),
      ),
      { referencedEventId: NOTE_ID },
    );
  });

  test('a plain mention yields no reference fields', () => {
    assert.deepEqual(
      referenceFields(
        event(30023, [
          ['d', 'article'],
          ['p', OWNER],
        ]),
      ),
      {},
    );
  });

  test('a d-tag with colons is preserved verbatim', () => {
    const fields = referenceFields(event(7, [['a', `34236:${OWNER}:weird:d:tag`]]));
    assert.equal(fields.referencedAddress, `34236:${OWNER}:weird:d:tag`);
    assert.equal(fields.referencedDTag, 'weird:d:tag');
    assert.equal(fields.referencedAuthorPubkey, OWNER);
  });

  test('a kind 34236 trigger uses its own identity', () => {
    const video = event(
      34236,
      [
        ['d', 'vine-1'],
        ['p', OWNER],
        ['a', `34236:${PARENT_AUTHOR}:elsewhere`],
      ],
      { id: VIDEO_ID, pubkey: OWNER },
    );
    assert.deepEqual(referenceFields(video), {
      referencedEventId: VIDEO_ID,
      referencedAddress: `34236:${OWNER}:vine-1`,
      referencedKind: '34236',
      referencedAuthorPubkey: OWNER,
      referencedDTag: 'vine-1',
    });
  });

  test('a video without a d tag has its id but no coordinate', () => {
    assert.deepEqual(referenceFields(event(34236, [], { id: VIDEO_ID })), { referencedEventId: VIDEO_ID });
  });

  test('malformed coordinates are dropped, and a malformed first A is not replaced by a later a', () => {
    for (const bad of ['34236', `34236:${OWNER}`, `34236:${OWNER}:`, `x:${OWNER}:d`, `:${OWNER}:d`, '34236::d', `4294967296:${OWNER}:d`]) {
      assert.deepEqual(referenceFields(event(7, [['a', bad]])), {}, bad);
    }
    assert.deepEqual(
      referenceFields(
        event(1111, [
          ['A', 'garbage'],
          ['a', `34236:${OWNER}:d`],
        ]),
      ),
      {},
    );
  });

  test('the largest u32 kind is accepted', () => {
    assert.equal(referenceFields(event(7, [['a', `4294967295:${OWNER}:d`]])).referencedKind, '4294967295');
  });

  test('e tags that do not hold an event id are skipped', () => {
    assert.deepEqual(referenceFields(event(7, [['e'], ['e', 'not-an-id'], ['e', NOTE_ID]])), { referencedEventId: NOTE_ID });
    assert.deepEqual(
      referenceFields(
        event(1111, [
          ['E', 'junk'],
          ['e', PARENT_ID],
        ]),
      ),
      { referencedEventId: PARENT_ID },
    );
  });
});

describe('coalesceTarget', () => {
  test('a direct a tag wins', () => {
    assert.equal(
      coalesceTarget(
        event(7, [
          ['e', VIDEO_ID],
          ['a', `34236:${OWNER}:d`],
        ]),
      ),
      `a:34236:${OWNER}:d`,
    );
  });

  test('else the LAST lowercase e tag (NIP-25)', () => {
    assert.equal(
      coalesceTarget(
        event(7, [
          ['e', PARENT_ID],
          ['e', NOTE_ID],
          ['p', OWNER],
        ]),
      ),
      `e:${NOTE_ID}`,
    );
  });

  test('else the root-aware address, else the root-aware event id', () => {
    assert.equal(
      coalesceTarget(
        event(16, [
          ['A', `34236:${OWNER}:root`],
          ['E', VIDEO_ID],
        ]),
      ),
      `a:34236:${OWNER}:root`,
    );
    assert.equal(coalesceTarget(event(16, [['E', VIDEO_ID]])), `e:${VIDEO_ID}`);
  });

  test('nothing to group on gives null', () => {
    assert.equal(
      coalesceTarget(
        event(7, [
          ['p', OWNER],
          ['a', 'bad'],
        ]),
      ),
      null,
    );
  });

  test('the address in the key is canonical', () => {
    assert.equal(coalesceTarget(event(7, [['a', `034236:${OWNER}:d:x`]])), `a:34236:${OWNER}:d:x`);
  });
});

describe('referenceFields of a long-form article', () => {
  test('an article citing a video still yields nothing: long-form mentions omit every referenced* field', () => {
    const article = event(30023, [
      ['d', 'article'],
      ['p', OWNER],
      ['a', `34236:${OWNER}:cited`],
      ['e', VIDEO_ID],
    ]);
    assert.deepEqual(referenceFields(article), {});
  });
});
