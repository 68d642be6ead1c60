/**
 * The vocabulary the stages share (DESIGN §2): what the engine puts on the outbound queue and the
 * delivery stage takes off it. The engine and delivery meet only through that queue, so neither
 * imports the other; both import this.
 */
import type { DeviceRegistration, Lane, RecipientClaim } from '../store/port.ts';
import type { CopyRef } from './templates/messages.ts';

/**
 * The notification types of seed 000, exactly as the `type` data field spells them, and
 * `relayEvent`: an event a NIP-9a relay pushed to a user's callback URL that nostr-push does not
 * render itself (id only, or a kind it has no copy for); the app fetches it from `relay`.
 * `keyword` (an alert word of the recipient's in someone's post, issue 13).
 */
export type NotificationType =
  | 'like'
  | 'comment'
  | 'mention'
  | 'repost'
  | 'directMessage'
  | 'newPost'
  | 'keyword'
  | 'relayEvent'
  // Issue 21, an app's `events:` settings: a kind-1 reply, a NIP-57 zap.
  | 'reply'
  | 'zap';

export interface PushMessage {
  /**
   * The data map. Every value is a string; `title` and `body` live here too (the FCM message
   * never has a top-level `notification`).
   */
  data: Record<string, string>;
  /** Collapse key (coalescing); sent as `android.collapse_key`, `apns-collapse-id`, Web Push `Topic`. Never a data field. */
  collapseKey?: string;
  /**
   * iOS banner for a message whose data carries no `title`/`body` (an encrypted payload): APNs
   * shows it, or the app's Notification Service Extension replaces it (`mutable-content: 1`).
   */
  apnsAlert?: { title: string; body?: string };
  /**
   * The template `data.title`/`data.body` were rendered from (in English): the delivery stage
   * renders it again for each device registered in another language (issue 15, docs/copy.md).
   * Transports ignore it; absent for copy that is not templated (the send API's).
   */
  copy?: CopyRef;
}

/**
 * One notification for one recipient, as the engine queues it for delivery (the payload of the
 * `outbound` queue) and as the direct-message hook hands it over.
 */
export interface OutboundNotification {
  eventId: string;
  recipient: string;
  /** A seed type, or `app:{type}` for a send API notification of an app-defined type. */
  type: NotificationType | AppNotificationType;
  message: PushMessage;
  /** The recipient claim held for this delivery; released when the delivery is finally given up. */
  claim: RecipientClaim | null;
  /** `created_at` of the triggering event (unix seconds); retries stop once it is too old. */
  eventCreatedAt: number;
  /**
   * The recipient's devices as the gates read them: the first attempt sends to these (divine
   * sends to the tokens its gate just read), a retry reads them afresh.
   */
  devices?: DeviceRegistration[];
  /** A kind 34236 trigger: the coordinate records a delivered push writes. */
  video?: { owner: string; dTag: string; recordTypes: string[] };
  /**
   * A bell (`newPost`): the rate window a delivered push opens for (subscriber, creator). Opened
   * only after a success, so a failed send never uses up the subscriber's window.
   */
  rateWindow?: { subscriber: string; creator: string; ttlSecs: number };
  /** A send API notification: the app, notification id and app type its delivery log entries are recorded under. */
  send?: { appId: string; notificationId: string; type: string };
  /** The lane it was queued in, when not normal (the per-user throttle lets critical through, `throttle.ts`). */
  lane?: Lane;
  /** A campaign push (`campaign.ts`): its claim key and the one device it is for. */
  campaign?: CampaignDelivery;
}

/** The internal type of a send API notification of an app-defined type. */
export type AppNotificationType = `app:${string}`;

/** What an outbound item of a campaign carries beyond the notification. */
export interface CampaignDelivery {
  appId: string;
  campaignId: string;
  /** The claim key: `{app}:{campaign idempotency key}:{device}` (the device as a token digest). */
  deliveryKey: string;
  /** The one device this item is for (a retry re-reads it by token). */
  token: string;
  /**
   * The device's offset, for the 21:00–06:59 local rule of campaigns. Absent for an announcement
   * (issue 13): the user opted into those, and they go out whatever the local time.
   */
  timezoneOffsetMinutes?: number;
}

/** The types quiet hours hold (social pushes); `urgentTypes` may name these. DMs are never held. */
export const HOLDABLE_TYPES: readonly NotificationType[] = ['like', 'comment', 'mention', 'repost', 'newPost', 'keyword'];

/**
 * The per-user throttle's window: a clock hour (`throttle.per_user_per_hour`). The delivery stage
 * counts in it and the user API reports it.
 */
export const THROTTLE_WINDOW_SECS = 3600;
