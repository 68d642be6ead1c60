import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { NostrEvent } from '../nostr/event.ts';
import { decodeNpub } from '../nostr/nip19.ts';
import { notificationCopy } from './copy.ts';
import { buildDirectMessagePayload, buildSocialPayload, type SocialNotificationType } from './payload.ts';
import type { PushMessage } from '../notification/types.ts';
import { withBadge } from '../notification/badge.ts';

const GOLDEN_LIKE_ON_VIDEO = new URL('./golden/like-on-video.data.json', import.meta.url);

// The golden file's identities: the video owner is NOT the recipient, so an owner taken from the
// recipient would show up as a diff.
const VIDEO_OWNER = `9b2f${'0'.repeat(58)}01`;
const ACTOR = `def4${'5'.repeat(60)}`;
const RECIPIENT = `789a${'b'.repeat(60)}`;
const VIDEO_ID = `fedc${'b'.repeat(60)}`;
const PARENT_COMMENT_ID = '2'.repeat(64);
const PARENT_AUTHOR = 'c'.repeat(64);

const REFERENCE_KEYS = ['referencedEventId', 'referencedAddress', 'referencedKind', 'referencedAuthorPubkey', 'referencedDTag'];
const SENDER_KEYS = ['senderPubkey', 'senderName', 'timestamp'];

function event(kind: number, tags: string[][], overrides: Partial<NostrEvent> = {}): NostrEvent {
  return {
    id: `abc1${'2'.repeat(60)}`,
    pubkey: ACTOR,
    created_at: 1_712_345_678,
    kind,
    tags,
    content: '',
    sig: '0'.repeat(128),
    ...overrides,
  };
}

function social(type: SocialNotificationType, trigger: NostrEvent, recipient: string, content = ''): PushMessage {
  return buildSocialPayload({ type, event: trigger, recipient, senderName: 'Alice', copy: notificationCopy(type, 'Alice', content) });
}

function assertAllStrings(message: PushMessage): void {
  for (const [key, value] of Object.entries(message.data)) assert.equal(typeof value, 'string', key);
}

function assertNoReferences(message: PushMessage): void {
  for (const key of REFERENCE_KEYS) assert.equal(key in message.data, false, key);
}

const likeOnVideo = event(
  7,
  [
    ['e', VIDEO_ID],
    ['a', `34236:${VIDEO_OWNER}:my-vine-id`],
    ['p', RECIPIENT],
    ['k', '34236'],
  ],
  { content: '+' },
);

describe('buildSocialPayload', () => {
  test('like on a video, sent with a badge of 4: the golden data map, byte for byte (keys, order, values)', () => {
    const message = withBadge(social('like', likeOnVideo, RECIPIENT), 4);
    assert.equal(`${JSON.stringify(message.data, null, 2)}\n`, readFileSync(GOLDEN_LIKE_ON_VIDEO, 'utf8'));
    assert.equal('collapseKey' in message, false);
    assert.equal('notification' in message, false);
  });

  test('withBadge: the badge is the last key, a string; a second stamp replaces the first; the collapse key stays; the input is untouched', () => {
    const built = buildSocialPayload({
      type: 'like',
      event: likeOnVideo,
      recipient: RECIPIENT,
      senderName: 'Alice',
      copy: notificationCopy('like', 'Alice', ''),
      collapseKey: 'like:k',
    });
    const stamped = withBadge(withBadge(built, 9), 0);
    assert.deepEqual(Object.keys(stamped.data), [...Object.keys(built.data), 'badge']);
    assert.equal(stamped.data.badge, '0');
    assert.equal(stamped.collapseKey, 'like:k');
    assert.equal('badge' in built.data, false);
    assert.throws(() => withBadge(built, -1), RangeError);
    assert.throws(() => withBadge(built, 1.5), RangeError);
  });

  test('like on a video: all five referenced fields, the owner from the a tag, not the recipient', () => {
    const { data } = social('like', likeOnVideo, RECIPIENT);
    assert.equal(data.referencedEventId, VIDEO_ID);
    assert.equal(data.referencedAddress, `34236:${VIDEO_OWNER}:my-vine-id`);
    assert.equal(data.referencedKind, '34236');
    assert.equal(data.referencedAuthorPubkey, VIDEO_OWNER);
    assert.notEqual(data.referencedAuthorPubkey, data.receiverPubkey);
    assert.equal(data.referencedDTag, 'my-vine-id');
    assert.equal(data.senderPubkey, ACTOR);
    assert.equal(decodeNpub(data.receiverNpub ?? ''), RECIPIENT);
  });

  test("comment reply on someone else's comment: routed to the root video, not the parent comment", () => {
    const reply = event(
      1111,
      [
        ['E', VIDEO_ID, '', VIDEO_OWNER],
        ['A', `34236:${VIDEO_OWNER}:my-vine-id`],
        ['K', '34236'],
        ['P', VIDEO_OWNER],
        ['e', PARENT_COMMENT_ID, '', PARENT_AUTHOR],
        ['k', '1111'],
        ['p', PARENT_AUTHOR],
      ],
      { content: 'agreed!' },
    );
    const message = social('comment', reply, PARENT_AUTHOR, reply.content);
    assertAllStrings(message);
    assert.deepEqual(
      {
        type: message.data.type,
        title: message.data.title,
        body: message.data.body,
        receiverPubkey: message.data.receiverPubkey,
        eventKind: message.data.eventKind,
        referencedEventId: message.data.referencedEventId,
        referencedAddress: message.data.referencedAddress,
        referencedAuthorPubkey: message.data.referencedAuthorPubkey,
        referencedDTag: message.data.referencedDTag,
      },
      {
        type: 'comment',
        title: 'New comment',
        body: 'Alice: agreed!',
        receiverPubkey: PARENT_AUTHOR,
        eventKind: '1111',
        referencedEventId: VIDEO_ID,
        referencedAddress: `34236:${VIDEO_OWNER}:my-vine-id`,
        referencedAuthorPubkey: VIDEO_OWNER,
        referencedDTag: 'my-vine-id',
      },
    );
  });

  test('a d-tag containing colons is preserved in the address and the d-tag field', () => {
    const like = event(7, [
      ['e', VIDEO_ID],
      ['a', `34236:${VIDEO_OWNER}:weird:d:tag`],
      ['p', RECIPIENT],
    ]);
    const { data } = social('like', like, RECIPIENT);
    assert.equal(data.referencedAddress, `34236:${VIDEO_OWNER}:weird:d:tag`);
    assert.equal(data.referencedDTag, 'weird:d:tag');
    assert.equal(data.referencedAuthorPubkey, VIDEO_OWNER);
  });

  test('mention in a long-form article: no referenced* fields', () => {
    const article = event(
      30023,
      [
        ['d', 'my-article'],
        ['title', 'Hi'],
        ['p', RECIPIENT],
      ],
      { content: 'thanks @bob' },
    );
    const message = social('mention', article, RECIPIENT, article.content);
    assertAllStrings(message);
    assertNoReferences(message);
    assert.equal(message.data.title, 'You were mentioned');
    assert.equal(message.data.body, 'Alice: thanks @bob');
    assert.equal(message.data.eventKind, '30023');
  });

  test('mention in a video: the video is its own target', () => {
    const video = event(
      34236,
      [
        ['d', 'vine-7'],
        ['p', RECIPIENT],
        ['title', 'x'],
      ],
      { id: VIDEO_ID, pubkey: VIDEO_OWNER, content: 'with you' },
    );
    const { data } = social('mention', video, RECIPIENT, video.content);
    assert.equal(data.eventId, VIDEO_ID);
    assert.equal(data.senderPubkey, VIDEO_OWNER);
    assert.equal(data.referencedEventId, VIDEO_ID);
    assert.equal(data.referencedAddress, `34236:${VIDEO_OWNER}:vine-7`);
    assert.equal(data.referencedKind, '34236');
    assert.equal(data.referencedAuthorPubkey, VIDEO_OWNER);
    assert.equal(data.referencedDTag, 'vine-7');
  });

  test('new post: the video is its own target, with the provisional copy', () => {
    const video = event(34236, [['d', 'vine-8']], { id: VIDEO_ID, pubkey: VIDEO_OWNER });
    const { data } = social('newPost', video, RECIPIENT);
    assert.equal(data.type, 'newPost');
    assert.equal(data.title, 'New vine');
    assert.equal(data.body, 'Alice posted a new vine');
    assert.equal(data.referencedAddress, `34236:${VIDEO_OWNER}:vine-8`);
  });

  test('like on a plain note: only referencedEventId', () => {
    const noteId = '3'.repeat(64);
    const { data } = social(
      'like',
      event(7, [
        ['e', noteId],
        ['p', RECIPIENT],
        ['k', '1'],
      ]),
      RECIPIENT,
    );
    assert.equal(data.referencedEventId, noteId);
    for (const key of REFERENCE_KEYS.slice(1)) assert.equal(key in data, false, key);
  });

  test('repost of a video: all reference fields and the repost copy', () => {
    const repost = event(16, [
      ['e', VIDEO_ID],
      ['a', `34236:${VIDEO_OWNER}:my-vine-id`],
      ['p', VIDEO_OWNER],
      ['k', '34236'],
    ]);
    const { data } = social('repost', repost, VIDEO_OWNER);
    assert.equal(data.body, 'Alice reposted your post');
    assert.equal(data.eventKind, '16');
    assert.equal(data.referencedAuthorPubkey, VIDEO_OWNER);
  });

  test('the social map always has the ten base fields, as strings', () => {
    const message = social('like', event(7, [['p', RECIPIENT]]), RECIPIENT);
    assert.deepEqual(Object.keys(message.data), [
      'type',
      'eventId',
      'title',
      'body',
      'senderPubkey',
      'senderName',
      'receiverPubkey',
      'receiverNpub',
      'eventKind',
      'timestamp',
    ]);
    assertAllStrings(message);
    assert.equal(message.data.timestamp, '1712345678');
  });

  test('a collapse key is passed through beside the data, never inside it', () => {
    const message = buildSocialPayload({
      type: 'like',
      event: likeOnVideo,
      recipient: RECIPIENT,
      senderName: 'Alice',
      copy: notificationCopy('like', 'Alice'),
      collapseKey: '0'.repeat(32),
    });
    assert.equal(message.collapseKey, '0'.repeat(32));
    assert.equal(Object.values(message.data).includes('0'.repeat(32)), false);
  });

  test('stored reference fields replace the event-derived ones (summaries)', () => {
    const message = buildSocialPayload({
      type: 'like',
      event: event(7, [['e', VIDEO_ID]]),
      recipient: RECIPIENT,
      senderName: 'x',
      copy: notificationCopy('like', 'x'),
      references: { referencedEventId: PARENT_COMMENT_ID },
    });
    assert.equal(message.data.referencedEventId, PARENT_COMMENT_ID);
  });

  test('a recipient that is not a hex pubkey is a programming error', () => {
    assert.throws(() => social('like', likeOnVideo, 'npub1nope'), RangeError);
  });
});

describe('buildDirectMessagePayload', () => {
  const GIFT_WRAP_ID = '4'.repeat(64);

  test('exactly the content-free keys: no sender, timestamp or referenced* fields', () => {
    const message = buildDirectMessagePayload(GIFT_WRAP_ID, RECIPIENT);
    assert.deepEqual(message.data, {
      type: 'directMessage',
      eventId: GIFT_WRAP_ID,
      title: 'New message',
      body: 'You have a new message',
      receiverPubkey: RECIPIENT,
      receiverNpub: 'npub10zdthwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwas9pm450',
      eventKind: '1059',
    });
    for (const key of [...SENDER_KEYS, ...REFERENCE_KEYS]) assert.equal(key in message.data, false, key);
    assert.equal('collapseKey' in message, false);
  });

  test('an optional collapse key is passed through', () => {
    assert.equal(buildDirectMessagePayload(GIFT_WRAP_ID, RECIPIENT, 'k1').collapseKey, 'k1');
  });
});
