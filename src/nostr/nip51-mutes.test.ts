import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EMPTY_MUTE_LIST, foldHashtag, parseMuteList } from './nip51-mutes.ts';
import { MatchableText } from '../util/whole-words.ts';

const pubkey = (c: string) => c.repeat(64);

test('every public item kind is read, malformed items skipped', () => {
  const { list, dropped } = parseMuteList(
    {
      tags: [
        ['p', pubkey('a')],
        ['p', pubkey('B')],
        ['p', 'npub1notahexkey'],
        ['t', 'Nostr'],
        ['t', '##Bitcoin'],
        ['t', '  '],
        ['word', ' Crypto '],
        ['word', ''],
        ['e', pubkey('c')],
        ['e', 'not-an-id'],
        ['e'],
        ['a', `30023:${pubkey('d')}:x`],
        ['unknown', 'x'],
      ],
    },
    100,
  );
  assert.deepEqual([...list.pubkeys], [pubkey('a'), pubkey('b')], 'hex pubkeys, lower-cased');
  assert.deepEqual([...list.hashtags], ['nostr', 'bitcoin']);
  assert.equal(list.words.size, 1);
  assert.equal(list.words.matches(new MatchableText('crypto!')), true);
  assert.deepEqual([...list.threads], [pubkey('c')]);
  assert.deepEqual(dropped, { hashtag: 0, word: 0, thread: 0 });
});

test('over the bound, the last distinct items of each kind are kept and the rest counted', () => {
  const tags = [
    ...['one', 'two', 'three', 'two'].map((t) => ['t', t]),
    ...['w1', 'w2', 'w3'].map((w) => ['word', w]),
    ...['1', '2', '3', '4'].map((c) => ['e', pubkey(c)]),
    ...['5', '6', '7'].map((c) => ['p', pubkey(c)]),
  ];
  const { list, dropped } = parseMuteList({ tags }, 2);
  assert.deepEqual([...list.hashtags], ['three', 'two'], 'a repeated item counts at its last place');
  assert.equal(list.words.matches(new MatchableText('w1')), false);
  assert.equal(list.words.matches(new MatchableText('w2 w3')), true);
  assert.deepEqual([...list.threads], [pubkey('3'), pubkey('4')]);
  assert.equal(list.pubkeys.size, 3, 'pubkeys are not bounded');
  assert.deepEqual(dropped, { hashtag: 1, word: 1, thread: 2 });
});

test('words are counted after folding: case variants are one item', () => {
  const { list, dropped } = parseMuteList({ tags: ['Spam', 'SPAM', 'spam'].map((w) => ['word', w]) }, 1);
  assert.equal(list.words.size, 1);
  assert.deepEqual(dropped, { hashtag: 0, word: 0, thread: 0 });
});

test('hashtags fold like words and lose their leading #', () => {
  assert.equal(foldHashtag('#NOSTR'), 'nostr');
  assert.equal(foldHashtag(' ＃Ｎｏｓｔｒ '), 'nostr', 'full-width # and letters');
  assert.equal(foldHashtag('c#'), 'c#', 'only a leading # goes');
});

test('the empty list mutes nothing', () => {
  assert.equal(EMPTY_MUTE_LIST.pubkeys.size + EMPTY_MUTE_LIST.hashtags.size + EMPTY_MUTE_LIST.threads.size, 0);
  assert.equal(EMPTY_MUTE_LIST.words.matches(new MatchableText('anything')), false);
});
