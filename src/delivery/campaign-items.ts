/**
 * A campaign's outbound items as the expansion queues them: one small reference per device
 * (app, campaign, recipient, device, when due), not the whole notification. The delivery stage
 * rebuilds the notification from the campaign record when it leases the item, so what it sends is
 * exactly what a fully written item would have carried.
 *
 * Why: a campaign queues one item per consenting device, and every one of them carried the same
 * title, body and data and three copies of the campaign id, ~940 bytes of JSON for a one-word
 * title. On SQLite every byte of an item is written at enqueue, rewritten at each lease and walked
 * past at the ack, and the 200,000-row queue of a large campaign outgrows the page cache; a
 * reference is ~260 bytes whatever the copy's length (docs/benchmarks.md at 1cc7613, "Where the
 * SQLite campaign's time went").
 *
 * Items written whole (by an earlier version, still queued or dead-lettered) are delivered as they
 * are. A reference whose campaign record is gone is dead-lettered, never dropped silently.
 */
import { createHash } from 'node:crypto';
import { npubEncode } from '../nostr/nip19.ts';
import { SECRET_PREFIX_CHARS } from '../observability/logger.ts';
import type { CampaignRecord, CampaignRequest } from '../store/port-campaigns.ts';
import type { DeviceRegistration, LeasedItem, StorePort } from '../store/port.ts';
import type { OutboundNotification, PushMessage } from '../notification/types.ts';
import { isBellItemRef, type BellItemRef, type ExpandBellItem } from '../notification/bell-item.ts';

/** The `data.type` of a campaign push, as seed 000 spells it. */
export const CAMPAIGN_PUSH_TYPE = 'campaign';
/** The `data.type` of an announcement push (a campaign of kind `announcement`, issue 13). */
export const ANNOUNCEMENT_PUSH_TYPE = 'announcement';

/** What a campaign's item carries; the rest of its notification comes from the campaign record. */
export interface CampaignItemRef {
  campaignItem: {
    appId: string;
    campaignId: string;
    recipient: string;
    device: DeviceRegistration;
    /** When the push was due (now, or the device's next 07:00 local): retries are bounded from it. */
    sendAtMs: number;
  };
}

/** A payload of the outbound queue: a notification, or a campaign item's or a bell's reference to one. */
export type OutboundPayload = OutboundNotification | CampaignItemRef | BellItemRef;

/** What building a campaign's notification needs of its record: everything but the audience (a list of up to 10,000 pubkeys). */
export interface CampaignCopy {
  appId: string;
  id: string;
  request: Omit<CampaignRequest, 'audience'>;
}

/** The push type of a campaign record: `campaign`, or `announcement` for an operator announcement. */
export function campaignPushType(campaign: CampaignCopy): string {
  return campaign.request.kind === 'announcement' ? ANNOUNCEMENT_PUSH_TYPE : CAMPAIGN_PUSH_TYPE;
}

/** The device part of a claim key and item id: a digest, since tokens run to kilobytes and must not show in keys. */
export function deviceDigest(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 32);
}

/** The claim key of one (campaign idempotency key, device) of an app: seed 000's `campaign_delivery:{idempotencyKey}`. */
export function campaignDeliveryKey(appId: string, idempotencyKey: string, token: string): string {
  return `${appId}:${idempotencyKey}:${deviceDigest(token)}`;
}

/**
 * The outbound item id of one (campaign, device): the same whenever the device is expanded (a
 * page redone after a crash queues nothing twice; so does a device a Redis scan returns twice).
 *
 * The token's first characters (as many as a log line may show of it) come before its digest so
 * that ids sort like tokens: the audience scan walks devices in token order (SQLite), so a page's
 * items go to the end of the queue's id index and the acks walk it in the same order, instead of
 * each item dirtying a random leaf page of a 200,000-entry index at the enqueue and again at the
 * ack (docs/benchmarks.md at 1cc7613, "Where the SQLite campaign's time went"). The item's payload
 * holds the whole token anyway.
 */
export function campaignItemId(appId: string, idempotencyKey: string, token: string): string {
  return `campaign:${appId}:${idempotencyKey}:${Array.from(token).slice(0, SECRET_PREFIX_CHARS).join('')}:${deviceDigest(token)}`;
}

/** The push of a campaign: seed 000's campaign data map, plus the app's `data` and the campaign id. */
export function campaignPushMessage(campaign: CampaignCopy, recipient: string): PushMessage {
  const { request } = campaign;
  return {
    data: {
      ...request.data,
      type: campaignPushType(campaign),
      title: request.title,
      body: request.body,
      campaignId: campaign.id,
      notificationId: campaign.id,
      ...(request.announcementId !== undefined ? { announcementId: String(request.announcementId) } : {}),
      receiverPubkey: recipient,
      receiverNpub: npubEncode(recipient),
    },
  };
}

/** One device's notification of a campaign, due at `sendAtMs`. */
export function campaignNotification(
  campaign: CampaignCopy,
  recipient: string,
  device: DeviceRegistration,
  sendAtMs: number,
): OutboundNotification {
  const pushType = campaignPushType(campaign);
  const offset = device.timezoneOffsetMinutes;
  return {
    eventId: campaign.id,
    recipient,
    type: `app:${pushType}`,
    message: campaignPushMessage(campaign, recipient),
    claim: null,
    // Retries are bounded from when the push was due, not from when the campaign was created.
    eventCreatedAt: Math.floor(sendAtMs / 1000),
    devices: [device],
    send: { appId: campaign.appId, notificationId: campaign.id, type: pushType },
    campaign: {
      appId: campaign.appId,
      campaignId: campaign.id,
      deliveryKey: campaignDeliveryKey(campaign.appId, campaign.request.idempotencyKey, device.token),
      token: device.token,
      ...(offset === undefined ? {} : { timezoneOffsetMinutes: offset }),
    },
  };
}

/** A whole notification has no `campaignItem`; a stored payload is parsed JSON, so the test is on the value, not the type. */
export function isCampaignItemRef(payload: OutboundPayload): payload is CampaignItemRef {
  return 'campaignItem' in payload && typeof payload.campaignItem === 'object';
}

/**
 * Campaign records kept by the delivery stage: a campaign's items come in a run, so one read
 * serves its whole run. A record's request never changes once created, so an entry never goes
 * stale; a campaign running alongside more than this many others is read again when it returns.
 */
export const CAMPAIGN_COPY_CACHE_ENTRIES = 64;

/** The campaign records the delivery stage builds notifications from, read once each (see {@link CAMPAIGN_COPY_CACHE_ENTRIES}). */
export class CampaignCopies {
  /** Insertion order is the eviction order; a pending read is shared by every item that asks meanwhile. */
  private readonly entries = new Map<string, Promise<CampaignCopy | null>>();

  constructor(
    private readonly store: Pick<StorePort, 'getCampaign'>,
    private readonly capacity = CAMPAIGN_COPY_CACHE_ENTRIES,
  ) {}

  get(appId: string, campaignId: string): Promise<CampaignCopy | null> {
    const key = `${appId}\n${campaignId}`;
    const held = this.entries.get(key);
    if (held) return held;
    const read = this.store.getCampaign(appId, campaignId).then((record) => (record === null ? null : copyOf(record)));
    // A failed read or a missing record is not remembered: the next item asks the store again.
    read.then(
      (copy) => copy === null && this.forget(key, read),
      () => this.forget(key, read),
    );
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, read);
    return read;
  }

  private forget(key: string, read: Promise<CampaignCopy | null>): void {
    if (this.entries.get(key) === read) this.entries.delete(key);
  }
}

function copyOf(record: CampaignRecord): CampaignCopy {
  const { audience: _audience, ...request } = record.request;
  return { appId: record.appId, id: record.id, request };
}

/** Reason a reference is dead-lettered with when its campaign record cannot be found. */
export const CAMPAIGN_RECORD_MISSING = 'campaign record not found';

/** Reason a bell reference is dead-lettered with by a delivery stage built without the bell expander (a wiring error). */
export const BELL_EXPANDER_MISSING = 'bell reference, but this delivery stage cannot expand bells';

/**
 * The item with its notification: a whole one as it is, a bell's reference expanded by
 * `expandBell`, a campaign's rebuilt from its campaign's record; null when that record is
 * missing (or a bell comes without an expander). Synchronous but for a campaign's, so the pushes
 * that are not campaigns' pay no extra promise.
 */
export function withNotification(
  copies: CampaignCopies,
  item: LeasedItem<OutboundPayload>,
  expandBell?: ExpandBellItem,
): LeasedItem<OutboundNotification> | null | Promise<LeasedItem<OutboundNotification> | null> {
  const payload = item.payload;
  if (isBellItemRef(payload)) return expandBell ? { ...item, payload: expandBell(payload.bellItem) } : null;
  if (!isCampaignItemRef(payload)) return { ...item, payload };
  const { appId, campaignId, recipient, device, sendAtMs } = payload.campaignItem;
  return copies
    .get(appId, campaignId)
    .then((campaign) => (campaign === null ? null : { ...item, payload: campaignNotification(campaign, recipient, device, sendAtMs) }));
}
