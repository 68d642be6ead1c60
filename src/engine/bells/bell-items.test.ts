import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NostrEvent } from '../../nostr/event.ts';
import { VIDEO } from '../../nostr/kinds.ts';
import type { DeviceRegistration } from '../../store/port.ts';
import type { OutboundNotification } from '../../notification/types.ts';
import type { BellItem } from '../../notification/bell-item.ts';
import { notificationCopy } from '../copy.ts';
import { buildSocialPayload } from '../payload.ts';
import { bellItemOf, bellNotificationExpander } from './bell-items.ts';
import { bellDelivery } from './rules.ts';

const CREATOR = `9b2f${'0'.repeat(58)}01`;
const WATCHER = `789a${'b'.repeat(60)}`;
const OWNER = '1d21b6be-13a5-4739-ae7b-af77b61390ee';
const RATE_LIMIT_SECS = 3600;
const DEVICES: DeviceRegistration[] = [
  { token: `fcm-${'x'.repeat(140)}`, transport: 'fcm' },
  {
    token: 'https://push.example/abc',
    transport: 'webpush',
    endpoint: 'https://push.example/abc',
    p256dh: 'p',
    auth: 'a',
    locale: 'pt-BR',
  },
];

function video(dTag: string, overrides: Partial<NostrEvent> = {}): NostrEvent {
  return {
    id: `fedc${'b'.repeat(60)}`,
    pubkey: CREATOR,
    created_at: 1_712_345_678,
    kind: VIDEO,
    // Tags beyond `d` (title, imeta, a hashtag, an `e` and an `a`) play no part in a bell's payload.
    tags: [
      ['title', 'Sunset'],
      ['d', dTag],
      ['t', 'nature'],
      ['e', '1'.repeat(64)],
      ['a', `30023:${'2'.repeat(64)}:article`],
    ],
    content: 'a video',
    sig: '0'.repeat(128),
    ...overrides,
  };
}

/** The whole notification the bell page queued before bells became references. */
function wholeBell(event: NostrEvent, dTag: string, senderName: string): OutboundNotification {
  const text = notificationCopy('newPost', senderName);
  return {
    eventId: event.id,
    recipient: WATCHER,
    type: 'newPost',
    message: buildSocialPayload({
      type: 'newPost',
      event,
      recipient: WATCHER,
      senderName,
      copy: { title: text.title, body: text.body, ...(text.template ? { template: text.template } : {}) },
    }),
    claim: { eventId: event.id, recipient: WATCHER, owner: OWNER },
    eventCreatedAt: event.created_at,
    devices: DEVICES,
    ...bellDelivery({ owner: event.pubkey, dTag }, WATCHER, RATE_LIMIT_SECS),
  };
}

function itemOf(event: NostrEvent, dTag: string, senderName: string) {
  return bellItemOf(
    event,
    dTag,
    { ...notificationCopy('newPost', senderName), senderName },
    { recipient: WATCHER, owner: OWNER, devices: DEVICES },
    RATE_LIMIT_SECS,
  );
}

describe('bell items: a bell queued as a reference', () => {
  test('expands into exactly the whole notification, byte for byte (key order included), from a stored (JSON) item', () => {
    const expand = bellNotificationExpander();
    for (const [dTag, name] of [
      ['vine-1', 'Alice'],
      ['with:colon and spaces', 'Bob "the builder"'],
    ] as const) {
      const event = video(dTag);
      const stored = JSON.parse(JSON.stringify(itemOf(event, dTag, name))) as BellItem;
      assert.equal(JSON.stringify(expand(stored)), JSON.stringify(wholeBell(event, dTag, name)), dTag);
    }
  });

  test('is well under half the size of the whole notification on the queue', () => {
    const event = video('vine-1');
    const reference = JSON.stringify({ bellItem: itemOf(event, 'vine-1', 'Alice') }).length;
    const whole = JSON.stringify(wholeBell(event, 'vine-1', 'Alice')).length;
    assert.ok(reference * 2 < whole, `reference ${reference} bytes, whole ${whole}`);
  });

  test('two videos expanded in turn by one expander keep their own fields; a changed item under a cached id is rebuilt', () => {
    const expand = bellNotificationExpander(1);
    const first = video('first');
    const second = video('second', { id: `0123${'4'.repeat(60)}`, created_at: 1_800_000_000 });
    for (let round = 0; round < 2; round++) {
      assert.deepEqual(expand(itemOf(first, 'first', 'Alice')), wholeBell(first, 'first', 'Alice'));
      assert.deepEqual(expand(itemOf(second, 'second', 'Alice')), wholeBell(second, 'second', 'Alice'));
    }
    // The same id with another coordinate (a forged or corrupted item) gets its own fields, not the cached video's.
    const forged = video('other', { id: second.id });
    assert.deepEqual(expand(itemOf(forged, 'other', 'Alice')), wholeBell(forged, 'other', 'Alice'));
  });
});
