import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NostrEvent } from '../nostr/event.ts';
import { contentRecipients, notificationTypeOfKind } from './recipients.ts';

const AUTHOR = 'a'.repeat(64);
const ALICE = 'b'.repeat(64);
const BOB = 'c'.repeat(64);
const CAROL = 'd'.repeat(64);

function event(kind: number, tags: string[][]): NostrEvent {
  return { id: 'f'.repeat(64), pubkey: AUTHOR, created_at: 1, kind, tags, content: '', sig: '0'.repeat(128) };
}

describe('contentRecipients', () => {
  test('a like notifies every valid p tag, as likes', () => {
    assert.deepEqual(
      contentRecipients(
        event(7, [
          ['e', '1'.repeat(64)],
          ['p', ALICE],
          ['p', BOB],
        ]),
      ),
      [
        { pubkey: ALICE, type: 'like' },
        { pubkey: BOB, type: 'like' },
      ],
    );
  });

  test('a repost notifies its p tags as reposts', () => {
    assert.deepEqual(contentRecipients(event(16, [['p', ALICE]])), [{ pubkey: ALICE, type: 'repost' }]);
  });

  test('long-form and video mentions notify their p tags as mentions', () => {
    assert.deepEqual(
      contentRecipients(
        event(30023, [
          ['d', 'x'],
          ['p', ALICE],
        ]),
      ),
      [{ pubkey: ALICE, type: 'mention' }],
    );
    assert.deepEqual(
      contentRecipients(
        event(34236, [
          ['d', 'x'],
          ['p', BOB],
        ]),
      ),
      [{ pubkey: BOB, type: 'mention' }],
    );
  });

  test('a reply comment notifies the root author (P) and then the parent author (p)', () => {
    const reply = event(1111, [
      ['p', BOB],
      ['E', '1'.repeat(64)],
      ['P', ALICE],
      ['e', '2'.repeat(64)],
    ]);
    assert.deepEqual(contentRecipients(reply), [
      { pubkey: ALICE, type: 'comment' },
      { pubkey: BOB, type: 'comment' },
    ]);
  });

  test('a top-level comment whose P and p coincide notifies once', () => {
    assert.deepEqual(
      contentRecipients(
        event(1111, [
          ['P', ALICE],
          ['p', ALICE],
        ]),
      ),
      [{ pubkey: ALICE, type: 'comment' }],
    );
  });

  test('a comment with only I/K tags notifies nobody', () => {
    assert.deepEqual(
      contentRecipients(
        event(1111, [
          ['I', 'https://example.com'],
          ['K', 'web'],
        ]),
      ),
      [],
    );
  });

  test('the author is always excluded', () => {
    assert.deepEqual(contentRecipients(event(7, [['p', AUTHOR]])), []);
    assert.deepEqual(
      contentRecipients(
        event(1111, [
          ['P', AUTHOR],
          ['p', CAROL],
        ]),
      ),
      [{ pubkey: CAROL, type: 'comment' }],
    );
    assert.deepEqual(
      contentRecipients(
        event(34236, [
          ['p', AUTHOR],
          ['p', ALICE],
        ]),
      ),
      [{ pubkey: ALICE, type: 'mention' }],
    );
  });

  test('invalid pubkeys are skipped and duplicates collapse, keeping first-seen order', () => {
    const like = event(7, [['p', 'not-hex'], ['p', ALICE.toUpperCase()], ['p'], ['p', BOB], ['p', ALICE], ['p', BOB]]);
    assert.deepEqual(contentRecipients(like), [
      { pubkey: BOB, type: 'like' },
      { pubkey: ALICE, type: 'like' },
    ]);
  });

  test('kinds that are not watched notify nobody', () => {
    for (const kind of [0, 1, 3, 6, 1059, 3079, 30000]) {
      assert.deepEqual(contentRecipients(event(kind, [['p', ALICE]])), [], String(kind));
    }
  });

  test('notificationTypeOfKind maps the watched kinds', () => {
    assert.equal(notificationTypeOfKind(7), 'like');
    assert.equal(notificationTypeOfKind(1111), 'comment');
    assert.equal(notificationTypeOfKind(1), undefined);
  });
});
