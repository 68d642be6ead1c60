/**
 * What every transport (FCM, APNs, Web Push, local ntfy topics) agrees on: one message, one
 * device, one classified outcome. The engine builds a {@link PushMessage} once per recipient; each
 * transport turns it into its own wire format.
 */
import type { DeviceRegistration } from '../store/port.ts';
import type { CopyRef } from '../engine/templates/messages.ts';

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
 * Why one send failed, as the callers need it:
 * - `token_not_registered`: the provider says the device is gone; the only kind that prunes it.
 * - `retryable`: 5xx/429 and the like; retry after `retryAfterSecs`, release the claim if every token failed so.
 * - every other kind is a plain failure: the claim is kept and nothing is retried.
 *
 * The kind names are also the `reason` label of `push_fcm_sends_failed_total` (divine's `metric_reason`).
 */
export type DeliveryErrorKind =
  | 'token_not_registered'
  | 'retryable_internal'
  | 'unauthorized'
  | 'invalid_request'
  | 'internal_request'
  | 'internal_response'
  | 'initialization'
  | 'unknown';

export interface DeliveryError {
  kind: DeliveryErrorKind;
  message: string;
  /** For `retryable_internal`: the provider's Retry-After in seconds (1 when absent). */
  retryAfterSecs?: number;
  /** HTTP status, when there was one. */
  status?: number;
  /**
   * For `token_not_registered` from APNs 410: since when Apple says the token is gone (ms). A
   * token registered (or re-registered) after that is kept.
   */
  unregisteredAtMs?: number;
}

/** A success may carry the provider's id of the message (FCM's `name`), recorded by the delivery log. */
export type SendOutcome = { ok: true; messageId?: string } | { ok: false; error: DeliveryError };

/** One transport. Implementations never throw: every failure is a classified outcome. */
export interface PushTransport {
  /** Which registered devices this transport serves. */
  handles(device: DeviceRegistration): boolean;
  /** Send one message to many devices, with the transport's own concurrency; one outcome per device token. */
  sendBatch(devices: DeviceRegistration[], message: PushMessage, signal?: AbortSignal): Promise<Map<string, SendOutcome>>;
  /** Release sockets and timers. */
  close(): Promise<void>;
}
