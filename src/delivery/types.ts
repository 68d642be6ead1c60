/**
 * What every transport (FCM, APNs, Web Push, local ntfy topics) agrees on: one message, one
 * device, one classified outcome. The engine builds a {@link PushMessage} once per recipient; each
 * transport turns it into its own wire format.
 */
import type { DeviceRegistration } from '../store/port.ts';
import type { PushMessage } from '../notification/types.ts';

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
