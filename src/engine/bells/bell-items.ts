/**
 * Bells on the outbound queue as references (`src/notification/bell-item.ts`): the fan-out page
 * queues a {@link BellItem} per watcher, and the delivery stage expands it into the notification
 * the page would have queued whole, with the same payload builder.
 */
import type { NostrEvent } from '../../nostr/event.ts';
import type { BellItem, ExpandBellItem } from '../../notification/bell-item.ts';
import type { OutboundNotification } from '../../notification/types.ts';
import type { NotificationCopy } from '../copy.ts';
import { buildSocialPayload } from '../payload.ts';
import { bellDelivery } from './rules.ts';
import { RecentValues } from '../../util/recent-values.ts';

/**
 * Videos kept by an expander: a fan-out's items come in a run, so one rebuilt video event serves
 * its whole run (and the payload builder's reference fields, worked out once per event object).
 */
export const BELL_VIDEO_CACHE_ENTRIES = 16;

/** A video's key in an expander's cache: every field its rebuilt event holds (ids, pubkeys and numbers hold no newline). */
function videoKeyOf(item: BellItem): string {
  return `${item.eventId}\n${item.creator}\n${item.kind}\n${item.createdAt}\n${item.dTag}`;
}

/** The video event a bell's payload is built from, from its key: the fields that play a part, and no others. */
function videoEventOfKey(key: string): NostrEvent {
  const [id = '', pubkey = '', kind = '0', createdAt = '0', ...dTag] = key.split('\n');
  return { id, pubkey, kind: Number(kind), created_at: Number(createdAt), tags: [['d', dTag.join('\n')]], content: '', sig: '' };
}

/**
 * The notification of one bell: what `enqueueBellPage` would queue whole for `item.recipient`.
 * `event` must be the item's video (or the one rebuilt from its fields).
 */
function bellNotificationOf(item: BellItem, event: NostrEvent): OutboundNotification {
  const copy: NotificationCopy = { title: item.title, body: item.body, ...(item.template ? { template: item.template } : {}) };
  return {
    eventId: item.eventId,
    recipient: item.recipient,
    type: 'newPost',
    message: buildSocialPayload({ type: 'newPost', event, recipient: item.recipient, senderName: item.senderName, copy }),
    claim: { eventId: item.eventId, recipient: item.recipient, owner: item.owner },
    eventCreatedAt: item.createdAt,
    devices: item.devices,
    ...bellDelivery({ owner: item.creator, dTag: item.dTag }, item.recipient, item.rateLimitSecs),
  };
}

/** An expander for one delivery stage, with its own cache of rebuilt videos (see {@link BELL_VIDEO_CACHE_ENTRIES}). */
export function bellNotificationExpander(capacity = BELL_VIDEO_CACHE_ENTRIES): ExpandBellItem {
  const videos = new RecentValues(videoEventOfKey, capacity);
  return (item) => bellNotificationOf(item, videos.get(videoKeyOf(item)));
}

/**
 * The bell item of `recipient` for kind 34236 `video` (whose `d` tag is `dTag`): the page's copy,
 * the watcher's claim owner and devices. Only a video's own fields go in: its reference fields
 * are its id and coordinate, so the expansion rebuilds them exactly.
 */
export function bellItemOf(
  video: NostrEvent,
  dTag: string,
  copy: NotificationCopy & { senderName: string },
  watcher: { recipient: string; owner: string; devices: BellItem['devices'] },
  rateLimitSecs: number,
): BellItem {
  return {
    eventId: video.id,
    creator: video.pubkey,
    kind: video.kind,
    dTag,
    createdAt: video.created_at,
    senderName: copy.senderName,
    title: copy.title,
    body: copy.body,
    ...(copy.template ? { template: copy.template } : {}),
    recipient: watcher.recipient,
    owner: watcher.owner,
    devices: watcher.devices,
    rateLimitSecs,
  };
}
