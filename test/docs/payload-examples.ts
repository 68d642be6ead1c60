/**
 * The example pushes of docs/app-developers.md, built by the very functions the service builds
 * them with (the engine's payload builders, the workers' message functions, the transports'
 * wire formats), from fixed keys and events. `app-developers.test.ts` compares the guide's
 * `example="…"` blocks with these, so the guide shows what a device receives today.
 */
import { getEventHash } from 'nostr-tools/pure';
import type { NostrEvent } from '../../src/nostr/event.ts';
import { publicKeyOf } from '../../src/nostr/keys.ts';
import { COMMENT, GENERIC_REPOST, REACTION, TEXT_NOTE, VIDEO, ZAP_RECEIPT } from '../../src/nostr/kinds.ts';
import { buildDirectMessagePayload, buildRelayEventPayload, buildSocialPayload } from '../../src/engine/payload.ts';
import type { SocialNotificationType } from '../../src/engine/payload.ts';
import { notificationCopy, summaryCopy, textNoteCopy } from '../../src/engine/copy.ts';
import { digestPushMessage } from '../../src/platform/digest-worker.ts';
import { sendPushMessage } from '../../src/platform/send-worker.ts';
import { campaignPushMessage } from '../../src/delivery/campaign-items.ts';
import { toFcmMessage } from '../../src/delivery/fcm/message.ts';
import { toApnsRequest } from '../../src/delivery/apns/message.ts';
import { withBadge } from '../../src/notification/badge.ts';
import type { PushMessage } from '../../src/notification/types.ts';

/** Fixed keys: the examples never change unless the builders do. */
export const EXAMPLE_RECIPIENT = publicKeyOf('11'.repeat(32));
export const EXAMPLE_SENDER = publicKeyOf('22'.repeat(32));
const CREATED_AT = 1_767_225_600; // 2026-01-01T00:00:00Z
const VIDEO_ADDRESS = `${VIDEO}:${EXAMPLE_RECIPIENT}:my-first-vine`;
const VIDEO_ID = 'a1'.repeat(32);
const NOTE_ID = 'b2'.repeat(32);
/** The token an example device registered; FCM examples carry it as `message.token`. */
export const EXAMPLE_TOKEN = 'fcm-registration-token-of-the-device';
/** The badge the delivery stage stamps on social pushes: the recipient's total new count. */
const BADGE = 3;

function event(kind: number, tags: string[][], content = ''): NostrEvent {
  const unsigned = { kind, created_at: CREATED_AT, tags, content, pubkey: EXAMPLE_SENDER };
  return { ...unsigned, id: getEventHash(unsigned), sig: '' };
}

const onVideo = [
  ['e', VIDEO_ID],
  ['a', VIDEO_ADDRESS],
  ['p', EXAMPLE_RECIPIENT],
  ['k', String(VIDEO)],
];

function social(type: SocialNotificationType, trigger: NostrEvent, copy = notificationCopy(type, 'Bob', trigger.content)): PushMessage {
  return withBadge(buildSocialPayload({ type, event: trigger, recipient: EXAMPLE_RECIPIENT, senderName: 'Bob', copy }), BADGE);
}

/** Every notification type the server sends, as the message handed to the transports. */
export function examplePushes(): Array<{ name: string; push: PushMessage }> {
  const zapReceipt = event(ZAP_RECEIPT, [
    ['p', EXAMPLE_RECIPIENT],
    ['e', VIDEO_ID],
  ]);
  return [
    { name: 'like', push: social('like', event(REACTION, onVideo, '+')) },
    {
      name: 'comment',
      push: social(
        'comment',
        event(
          COMMENT,
          [
            ['A', VIDEO_ADDRESS],
            ['K', String(VIDEO)],
            ['P', EXAMPLE_RECIPIENT],
            ['a', VIDEO_ADDRESS],
            ['k', String(VIDEO)],
            ['p', EXAMPLE_RECIPIENT],
          ],
          'Love this one!',
        ),
      ),
    },
    {
      name: 'mention',
      push: social(
        'mention',
        event(
          VIDEO,
          [
            ['p', EXAMPLE_RECIPIENT],
            ['d', 'bobs-vine'],
            ['title', 'With Alice'],
          ],
          'At the beach with Alice',
        ),
      ),
    },
    { name: 'repost', push: social('repost', event(GENERIC_REPOST, onVideo)) },
    {
      name: 'like-summary',
      push: withBadge(
        buildSocialPayload({
          type: 'like',
          event: event(REACTION, onVideo, '+'),
          recipient: EXAMPLE_RECIPIENT,
          senderName: 'Bob',
          copy: summaryCopy('like', 'Bob', 13),
          collapseKey: 'likes-of-my-first-vine',
        }),
        BADGE,
      ),
    },
    {
      name: 'newPost',
      push: social(
        'newPost',
        event(VIDEO, [
          ['d', 'bobs-new-vine'],
          ['title', 'Sunset'],
        ]),
      ),
    },
    {
      name: 'keyword',
      push: social(
        'keyword',
        event(VIDEO, [
          ['d', 'pizza-vine'],
          ['title', 'Best pizza in town'],
        ]),
      ),
    },
    {
      name: 'reply',
      push: social(
        'reply',
        event(
          TEXT_NOTE,
          [
            ['e', NOTE_ID, '', 'root'],
            ['p', EXAMPLE_RECIPIENT],
          ],
          'Agreed!',
        ),
        textNoteCopy('reply', 'Bob', 'Agreed!'),
      ),
    },
    {
      name: 'zap',
      push: withBadge(
        buildSocialPayload({
          type: 'zap',
          event: zapReceipt,
          recipient: EXAMPLE_RECIPIENT,
          senderName: 'Bob',
          copy: notificationCopy('zap', 'Bob', '2100'),
        }),
        BADGE,
      ),
    },
    { name: 'directMessage', push: buildDirectMessagePayload('c3'.repeat(32), EXAMPLE_RECIPIENT) },
    {
      name: 'relayEvent',
      push: buildRelayEventPayload({
        eventId: 'd4'.repeat(32),
        relay: 'wss://relay.example.com/',
        recipient: EXAMPLE_RECIPIENT,
        eventKind: 1,
      }),
    },
    { name: 'digest', push: digestPushMessage({ pubkey: EXAMPLE_RECIPIENT, counts: { like: 5, comment: 2 }, leaseExpiresAtMs: 0 }) },
    {
      name: 'campaign',
      push: campaignPushMessage(
        {
          appId: 'default',
          id: 'cmp_01J0EXAMPLE',
          request: {
            idempotencyKey: 'spring-2026',
            title: 'New filters',
            body: 'Try the spring filters',
            data: { deepLink: 'app://filters' },
          },
        },
        EXAMPLE_RECIPIENT,
      ),
    },
    {
      name: 'send-api',
      push: sendPushMessage(
        {
          appId: 'default',
          id: 'ntf_01J0EXAMPLE',
          state: 'started',
          createdAtMs: 0,
          offset: 0,
          sendAtMs: 0,
          request: {
            recipients: [EXAMPLE_RECIPIENT],
            type: 'orderShipped',
            title: 'Your order shipped',
            body: 'It arrives Tuesday',
            data: { orderId: '1234' },
            priority: 'normal',
          },
        },
        EXAMPLE_RECIPIENT,
      ),
    },
  ];
}

/** `example="…"` name → the JSON the guide must show under it. */
export function exampleBlocks(): Map<string, unknown> {
  const blocks = new Map<string, unknown>();
  for (const { name, push } of examplePushes()) {
    const fcm = toFcmMessage(EXAMPLE_TOKEN, push).message;
    blocks.set(`${name}/data`, fcm.data);
    const apns = toApnsRequest(push, { topic: 'com.example.app', expiresAtSecs: 0 });
    blocks.set(`${name}/apns`, { headers: Object.fromEntries(apns?.headers ?? []), aps: apns?.payload.aps });
    if (name === 'like') {
      blocks.set('like/fcm', fcm);
      blocks.set('like/apns-body', apns?.payload);
    }
  }
  return blocks;
}
