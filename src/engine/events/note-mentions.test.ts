import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nprofileEncode, npubEncode } from 'nostr-tools/nip19';
import { contentMentions, MAX_CONTENT_MENTIONS, noteMentions } from './note-mentions.ts';

const ALICE = 'a'.repeat(64);
const BOB = 'b'.repeat(64);
const CAROL = 'c'.repeat(64);

test('npub and nprofile references in the content are mentions, each once, in order', () => {
  const content = `hi nostr:${npubEncode(ALICE)}, and nostr:${nprofileEncode({ pubkey: BOB, relays: ['wss://r.example'] })}! again nostr:${npubEncode(ALICE)}`;
  assert.deepEqual(contentMentions(content), [ALICE, BOB]);
});

test('bare npubs, note references and undecodable references are not mentions', () => {
  const npub = npubEncode(ALICE);
  const broken = `${npub.slice(0, -1)}${npub.endsWith('q') ? 'p' : 'q'}`;
  assert.deepEqual(contentMentions(`${npub} nostr:${broken} nostr:note1${'q'.repeat(58)}`), []);
});

test('a note mentions its p-tagged users first, then those its content references, without duplicates', () => {
  const note = {
    tags: [
      ['p', CAROL],
      ['p', 'not-hex'],
      ['p', ALICE],
      ['e', '1'.repeat(64)],
    ],
    content: `cc nostr:${npubEncode(BOB)} nostr:${npubEncode(ALICE)}`,
  };
  assert.deepEqual(noteMentions(note), [CAROL, ALICE, BOB]);
});

test('content references are capped', () => {
  const many = Array.from({ length: MAX_CONTENT_MENTIONS + 5 }, (_, i) => `nostr:${npubEncode(i.toString(16).padStart(64, '0'))}`);
  assert.equal(contentMentions(many.join(' ')).length, MAX_CONTENT_MENTIONS);
});
