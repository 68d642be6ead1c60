import type { PushMessage } from '../../notification/types.ts';
/**
 * The FCM HTTP v1 request body for one device (divine-push-service §5.2), as a pure function.
 *
 * Every message is data-only: title and body travel inside `data` and there is never a top-level
 * `notification`. Android renders its own banner from the data, so it only gets `priority: high`
 * for user-visible pushes. iOS gets an APNs override in which the OS presents the banner:
 * `aps.alert` plus `mutable-content: 1` (for a Notification Service Extension), push type `alert`,
 * priority 10 — and never `content-available`, which would wake the app's background isolate and
 * show a second, locally built banner (divine-push-service#20).
 */

/** `android` block of an FCM v1 message. */
export interface FcmAndroidConfig {
  priority?: 'high';
  collapse_key?: string;
}

/** `aps` dictionary of the APNs payload. */
export interface FcmApsDictionary {
  alert?: { title?: string; body?: string };
  /** The app icon's badge: the `badge` data field (the recipient's total new count), as a number. */
  badge?: number;
  'mutable-content'?: 1;
  'content-available'?: 1;
}

/** `apns` block of an FCM v1 message: headers forwarded to APNs and the APNs JSON payload. */
export interface FcmApnsConfig {
  /** `aps` first, then every data field except `title` and `body`. */
  payload: { aps: FcmApsDictionary } & Record<string, string | FcmApsDictionary>;
  headers: {
    'apns-push-type': 'alert' | 'background';
    'apns-priority': '10' | '5';
    'apns-collapse-id'?: string;
  };
}

/** The `message` of `POST /v1/projects/{project}/messages:send`. */
export interface FcmMessage {
  token: string;
  data: Record<string, string>;
  android?: FcmAndroidConfig;
  apns?: FcmApnsConfig;
}

/** The whole request body. */
export interface FcmSendRequestBody {
  message: FcmMessage;
}

/** Build the v1 body for `token`. Key order is fixed (token, data, android, apns) so golden tests can compare text. */
export function toFcmMessage(token: string, message: PushMessage): FcmSendRequestBody {
  const fcmMessage: FcmMessage = { token, data: { ...message.data } };
  const android = buildAndroidConfig(message);
  if (android) fcmMessage.android = android;
  const apns = buildApnsConfig(message);
  if (apns) fcmMessage.apns = apns;
  return { message: fcmMessage };
}

/** True when the message carries user-visible text (a `title` or `body` data key, or an encrypted payload's placeholder banner). */
export function isAlert(message: PushMessage): boolean {
  return message.data.title !== undefined || message.data.body !== undefined || message.apnsAlert !== undefined;
}

/**
 * `{"priority":"high"}` for alerts, plus `collapse_key` when set; nothing at all for a silent push
 * without a collapse key. Never `android.notification`: the app draws the banner itself.
 */
export function buildAndroidConfig(message: PushMessage): FcmAndroidConfig | undefined {
  const alert = isAlert(message);
  if (!alert && message.collapseKey === undefined) return undefined;
  const android: FcmAndroidConfig = {};
  if (alert) android.priority = 'high';
  if (message.collapseKey !== undefined) android.collapse_key = message.collapseKey;
  return android;
}

/**
 * Alert shape when there is a title or body; background shape (`content-available`, priority 5)
 * for other non-empty data; no block for empty data.
 */
export function buildApnsConfig(message: PushMessage): FcmApnsConfig | undefined {
  // A data field named `aps` must not replace the APNs dictionary; it still travels in `data`.
  const { aps: _shadowedAps, ...withoutAps } = message.data;
  const { title, body, ...rest } = withoutAps;
  // A message without text of its own (an encrypted payload) may name a placeholder banner; its
  // data then travels whole, since title and body were never in it.
  const shownTitle = title ?? message.apnsAlert?.title;
  const shownBody = body ?? (title === undefined ? message.apnsAlert?.body : undefined);
  if (shownTitle !== undefined || shownBody !== undefined) {
    const alert: { title?: string; body?: string } = {};
    if (shownTitle !== undefined) alert.title = shownTitle;
    if (shownBody !== undefined) alert.body = shownBody;
    return {
      payload: { aps: { alert, ...badgeOf(message), 'mutable-content': 1 }, ...rest },
      headers: withCollapseId({ 'apns-push-type': 'alert', 'apns-priority': '10' }, message.collapseKey),
    };
  }
  if (Object.keys(message.data).length === 0) return undefined;
  return {
    payload: { aps: { ...badgeOf(message), 'content-available': 1 }, ...rest },
    headers: withCollapseId({ 'apns-push-type': 'background', 'apns-priority': '5' }, message.collapseKey),
  };
}

/** `{badge}` when the data carries a `badge` that is a non-negative integer (issue 13); nothing otherwise. */
function badgeOf(message: PushMessage): { badge?: number } {
  const raw = message.data.badge;
  if (raw === undefined || !/^\d{1,9}$/.test(raw)) return {};
  return { badge: Number(raw) };
}

function withCollapseId(headers: FcmApnsConfig['headers'], collapseKey: string | undefined): FcmApnsConfig['headers'] {
  if (collapseKey !== undefined) headers['apns-collapse-id'] = collapseKey;
  return headers;
}
