/**
 * A bell's outbound item as the fan-out queues it: what differs between the watchers of one video
 * (recipient, claim owner, devices) and the few fields the shared part is rebuilt from, instead of
 * the whole notification. The delivery stage expands it with the engine's own payload builder
 * (injected as {@link ExpandBellItem}, since delivery imports nothing of the engine), so what it
 * sends is exactly what a whole item would have carried.
 *
 * Why: a fan-out queues one item per watcher, and a whole bell notification is ~1,800 bytes of
 * JSON (the video's id three times, its author's pubkey four times, the recipient's five, the copy
 * and the reference fields) that every item carried, was encoded at the enqueue, written to the
 * store, read and parsed at each lease. The reference is ~700 bytes, most of it the device list
 * (docs/benchmarks.md, "The fan-out's cost per push").
 *
 * Items written whole (by an earlier version, still queued or dead-lettered) are delivered as
 * they are.
 */
import type { DeviceRegistration } from '../store/port.ts';
import type { CopyRef } from './templates/messages.ts';
import type { OutboundNotification } from './types.ts';

export interface BellItem {
  /** The video event: its id, author, kind, `d` tag and `created_at` (its reference fields and timestamp come from these). */
  eventId: string;
  creator: string;
  kind: number;
  dTag: string;
  createdAt: number;
  /** The copy, resolved once per page: sender name, title, body and the template they came from. */
  senderName: string;
  title: string;
  body: string;
  template?: CopyRef;
  /** The watcher, the owner token of its recipient claim, and its devices as the page's gates read them. */
  recipient: string;
  owner: string;
  devices: DeviceRegistration[];
  /** `service.new_post_rate_limit_secs` when queued: the rate window a delivered bell opens. */
  rateLimitSecs: number;
}

/** The payload of a bell's outbound item. */
export interface BellItemRef {
  bellItem: BellItem;
}

/** The whole notification of a bell item (the engine's `bellNotification`, injected into the delivery stage). */
export type ExpandBellItem = (item: BellItem) => OutboundNotification;

/** A whole notification has no `bellItem`; a stored payload is parsed JSON, so the test is on the value, not the type. */
export function isBellItemRef(payload: object): payload is BellItemRef {
  return 'bellItem' in payload && typeof payload.bellItem === 'object' && payload.bellItem !== null;
}
