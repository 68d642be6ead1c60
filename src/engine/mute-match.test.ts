import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NostrEvent } from '../nostr/event.ts';
import { COMMENT, GENERIC_REPOST, REACTION, TEXT_NOTE, ZAP_RECEIPT } from '../nostr/kinds.ts';
import { parseMuteList } from '../nostr/nip51-mutes.ts';
import { muteReason, MuteSubject, ownText } from './mute-match.ts';

const id = (c: string) => c.repeat(64);
const sender = id('a');
const mutedThread = id('f');
const event = (kind: number, tags: string[][], content = '', eventId = id('0')): NostrEvent => ({
  id: eventId,
  pubkey: sender,
  kind,
  created_at: 1,
  tags,
  content,
  sig: '',
});
const list = parseMuteList(
  {
    tags: [
      ['p', id('b')],
      ['t', 'Politics'],
      ['word', 'spoiler'],
      ['e', mutedThread],
    ],
  },
  100,
).list;
const reason = (subject: NostrEvent, from = sender, text?: string) => muteReason(list, from, new MuteSubject(subject, text));

test('a muted sender is muted whatever the event', () => {
  assert.equal(reason(event(REACTION, [], '+'), id('b')), 'pubkey');
  assert.equal(muteReason(list, id('b'), null), 'pubkey', 'a summary checks the sender');
  assert.equal(muteReason(list, sender, null), null);
});

test('a muted hashtag in the event t tags mutes it, in any case and with or without #', () => {
  assert.equal(reason(event(COMMENT, [['t', 'POLITICS']], 'hi')), 'hashtag');
  assert.equal(reason(event(COMMENT, [['t', '#politics']], 'hi')), 'hashtag');
  assert.equal(reason(event(COMMENT, [['t', 'sports']], 'hi')), null);
  assert.equal(reason(event(COMMENT, [], 'about politics')), null, 'a word in the text is no hashtag');
});

test("a muted word in the sender's own text mutes the event", () => {
  assert.equal(reason(event(COMMENT, [], 'No SPOILER here')), 'word');
  assert.equal(reason(event(COMMENT, [], 'no spoilers here')), null, 'whole words only');
  assert.equal(reason(event(ZAP_RECEIPT, [], ''), sender, 'great spoiler!'), 'word', "a zap's comment is given as its text");
});

test("a repost's content is the reposted event, not the reposter's words", () => {
  const repost = event(GENERIC_REPOST, [['e', id('1')]], JSON.stringify({ content: 'spoiler' }));
  assert.equal(ownText(repost), '');
  assert.equal(reason(repost), null);
});

test('a muted thread: the event itself, a reply whose root or parent it is, a like, repost or zap of it', () => {
  assert.equal(reason(event(TEXT_NOTE, [], 'x', mutedThread)), 'thread', 'the muted event itself');
  assert.equal(
    reason(
      event(
        TEXT_NOTE,
        [
          ['e', mutedThread, '', 'root'],
          ['e', id('2'), '', 'reply'],
        ],
        'x',
      ),
    ),
    'thread',
    'marked root',
  );
  assert.equal(
    reason(
      event(
        TEXT_NOTE,
        [
          ['e', id('2'), '', 'root'],
          ['e', mutedThread, '', 'reply'],
        ],
        'x',
      ),
    ),
    'thread',
    'marked parent',
  );
  assert.equal(
    reason(
      event(
        TEXT_NOTE,
        [
          ['e', mutedThread],
          ['e', id('3')],
          ['e', id('2')],
        ],
        'x',
      ),
    ),
    'thread',
    'positional root',
  );
  assert.equal(
    reason(
      event(
        REACTION,
        [
          ['e', mutedThread],
          ['p', id('9')],
        ],
        '+',
      ),
    ),
    'thread',
    'a like of it',
  );
  assert.equal(reason(event(GENERIC_REPOST, [['e', mutedThread]])), 'thread', 'a repost of it');
  assert.equal(reason(event(ZAP_RECEIPT, [['e', mutedThread]])), 'thread', 'a zap of it');
  assert.equal(
    reason(
      event(
        COMMENT,
        [
          ['E', mutedThread],
          ['e', id('2')],
        ],
        'x',
      ),
    ),
    'thread',
    'a NIP-22 comment whose root is the muted event',
  );
  assert.equal(
    reason(
      event(
        COMMENT,
        [
          ['E', id('2')],
          ['e', mutedThread],
        ],
        'x',
      ),
    ),
    'thread',
    'a NIP-22 comment whose parent it is',
  );
});

test('an event that only cites a muted event, or is in another thread, is not muted', () => {
  assert.equal(
    reason(
      event(
        TEXT_NOTE,
        [
          ['e', id('2'), '', 'root'],
          ['e', mutedThread, '', 'mention'],
        ],
        'x',
      ),
    ),
    null,
  );
  assert.equal(reason(event(TEXT_NOTE, [['e', id('2'), '', 'root']], 'x')), null);
  assert.equal(
    reason(
      event(
        TEXT_NOTE,
        [
          ['e', id('2')],
          ['e', mutedThread],
          ['e', id('3')],
        ],
        'x',
      ),
    ),
    null,
    'a middle positional e tag is a mention',
  );
});

test('the subject is prepared once, however many lists look at it', () => {
  const subject = new MuteSubject(event(COMMENT, [['t', 'x']], 'some words'));
  assert.equal(subject.words, subject.words);
  assert.equal(subject.hashtags, subject.hashtags);
  assert.equal(subject.threadIds, subject.threadIds);
});
