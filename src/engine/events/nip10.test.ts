import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { threadReferences } from './nip10.ts';

const ROOT = '1'.repeat(64);
const MIDDLE = '2'.repeat(64);
const PARENT = '3'.repeat(64);
const ROOT_AUTHOR = 'a'.repeat(64);
const PARENT_AUTHOR = 'b'.repeat(64);

describe('NIP-10 marked e tags', () => {
  test('root and reply: the parent is the reply, the root the root, each with its pubkey hint', () => {
    const refs = threadReferences({
      tags: [
        ['e', ROOT, 'wss://r.example', 'root', ROOT_AUTHOR],
        ['e', PARENT, '', 'reply', PARENT_AUTHOR],
      ],
    });
    assert.deepEqual(refs, {
      root: { eventId: ROOT, authorHint: ROOT_AUTHOR },
      parent: { eventId: PARENT, authorHint: PARENT_AUTHOR },
    });
  });

  test('a root alone is a direct reply to the root', () => {
    const refs = threadReferences({ tags: [['e', ROOT, '', 'root']] });
    assert.deepEqual(refs, { root: { eventId: ROOT }, parent: { eventId: ROOT } });
  });

  test('marked tags win over unmarked ones, which are then mentions of notes', () => {
    const refs = threadReferences({
      tags: [
        ['e', MIDDLE],
        ['e', ROOT, '', 'root'],
        ['e', PARENT, '', 'reply'],
        ['e', '4'.repeat(64), '', 'mention'],
      ],
    });
    assert.deepEqual(refs, { root: { eventId: ROOT }, parent: { eventId: PARENT } });
  });

  test('an invalid pubkey hint is dropped, an invalid id skips the tag', () => {
    const refs = threadReferences({
      tags: [
        ['e', 'not-an-id', '', 'root'],
        ['e', PARENT, '', 'reply', 'npub1nothex'],
      ],
    });
    assert.deepEqual(refs, { root: { eventId: PARENT }, parent: { eventId: PARENT } });
  });
});

describe('NIP-10 positional (deprecated) e tags', () => {
  test('one tag is both the root and the parent', () => {
    assert.deepEqual(threadReferences({ tags: [['e', ROOT]] }), { root: { eventId: ROOT }, parent: { eventId: ROOT } });
  });

  test('two tags are the root then the parent', () => {
    assert.deepEqual(
      threadReferences({
        tags: [
          ['e', ROOT],
          ['e', PARENT, 'wss://r.example'],
        ],
      }),
      {
        root: { eventId: ROOT },
        parent: { eventId: PARENT },
      },
    );
  });

  test('more tags are the root, mentions, then the parent', () => {
    assert.deepEqual(
      threadReferences({
        tags: [
          ['e', ROOT],
          ['e', MIDDLE],
          ['e', PARENT],
        ],
      }),
      {
        root: { eventId: ROOT },
        parent: { eventId: PARENT },
      },
    );
  });

  test('a note without e tags is no reply', () => {
    assert.deepEqual(threadReferences({ tags: [['p', ROOT_AUTHOR]] }), {});
    assert.deepEqual(threadReferences({ tags: [['e', MIDDLE, '', 'mention']] }), {});
  });
});
