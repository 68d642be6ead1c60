/**
 * Typed calls of every user-facing route of nostr-push (docs/inbox.md, docs/app-developers.md),
 * each authenticated with NIP-98 by the user's signer: inbox counts and viewed marks, alert words,
 * announcements, devices and preferences (the HTTP registration, equivalent to kinds
 * 3079/3080/3083), NIP-9a callback URLs and gateway registrations, and notification opens; plus
 * the public `/health` (the service key) and the VAPID key. Request and response types are those
 * of the server's OpenAPI operations, by operationId (types.ts).
 *
 * A refusal (any status but the route's success) throws a {@link PushApiError} with the
 * catalogue's stable `code`.
 */
import { nip98Fetch, type FetchFunction } from './nip98.js';
import type { NostrSigner, SignedEvent } from './signer.js';
import type { InboxType, RequestBody, ResponseBody } from './types.js';

export interface PushClientOptions {
  /**
   * The service's base URL as its operator published it (`server.public_url`, e.g.
   * `https://push.example.com`): NIP-98 signs the absolute URL, which must be the one the server
   * checks against.
   */
  baseUrl: string;
  /** The user's signer: every NIP-98 call is signed by it. */
  signer: NostrSigner;
  /** The app on a multi-app service (`X-App`); absent, the service's default app. */
  app?: string;
  /** Another `fetch` (default: the global one). */
  fetch?: FetchFunction;
}

/** A route's refusal: the HTTP status and the server's catalogue code (`NIP98_UNAUTHORIZED`, `INVALID_DEVICE`, …). */
export class PushApiError extends Error {
  override readonly name = 'PushApiError';
  constructor(
    readonly status: number,
    /** The stable code from the server's error catalogue, or `HTTP_<status>` when the body had none. */
    readonly code: string,
    message: string,
    /** `Retry-After` in seconds, on a 429. */
    readonly retryAfterSecs: number | undefined,
  ) {
    super(message);
  }
}

export interface PushClient {
  /** `GET /health` (no auth): the service's `pubkey`, which registrations are encrypted to. */
  health(): Promise<ResponseBody<'getHealth'>>;
  /** The service key from `/health`; throws when the service has none configured. */
  servicePubkey(): Promise<string>;
  /** `GET /v1/webpush/vapid-public-key` (no auth): the `applicationServerKey` for Web Push subscriptions. */
  vapidPublicKey(): Promise<ResponseBody<'getVapidPublicKey'>>;

  /** `GET /v1/inbox/counts`: counts per type and `totalNew`, the badge. */
  inboxCounts(): Promise<ResponseBody<'getInboxCounts'>>;
  /** `POST /v1/inbox/viewed`: mark `types` (every type when absent) viewed; answers the counts after. */
  markViewed(types?: InboxType[]): Promise<ResponseBody<'markInboxViewed'>>;
  /** `GET /v1/alert-words`. */
  alertWords(): Promise<ResponseBody<'getAlertWords'>>;
  /** `PUT /v1/alert-words`: replace the user's alert words; answers them as stored (normalised). */
  setAlertWords(words: RequestBody<'setAlertWords'>['words']): Promise<ResponseBody<'setAlertWords'>>;
  /** `GET /v1/announcements`: the app's current announcements. */
  announcements(): Promise<ResponseBody<'getAnnouncements'>>;

  /** `GET /v1/devices`: the user's devices (tokens redacted to a prefix). */
  devices(): Promise<ResponseBody<'listDevices'>>;
  /**
   * `PUT /v1/devices/{token}`: register a device as a kind 3079 would. `created` is true when the
   * token was new to the user (201), false when an existing registration was updated (200).
   */
  registerDevice(
    token: string,
    registration?: RequestBody<'registerDevice'>,
  ): Promise<ResponseBody<'registerDevice', 200 | 201> & { created: boolean }>;
  /** `DELETE /v1/devices/{token or id}`: as a kind 3080 does (404 `DEVICE_NOT_FOUND` for a device not the user's). */
  removeDevice(tokenOrId: string): Promise<void>;
  /** `PUT /v1/preferences`: the whole preferences, as a kind 3083 states them. */
  setPreferences(preferences: RequestBody<'setPreferences'>): Promise<ResponseBody<'setPreferences'>>;

  /** `POST /v1/nip9a/callbacks`: a callback URL for `relay` pushing to this user; its secret is shown only in this answer. */
  createNip9aCallback(relay: RequestBody<'createNip9aCallback'>['relay']): Promise<ResponseBody<'createNip9aCallback', 201>>;
  /** `GET /v1/nip9a/callbacks`: the user's callback URLs (secrets redacted). */
  nip9aCallbacks(): Promise<ResponseBody<'listNip9aCallbacks'>>;
  /** `DELETE /v1/nip9a/callbacks/{id}`: revoke one; the relay's next POST gets 404. */
  revokeNip9aCallback(id: string): Promise<void>;
  /** `PUT /v1/nip9a/registrations`: hand a kind 30390 to the service's NIP-9a gateway (for relays without NIP-9a). */
  putNip9aRegistration(event: SignedEvent & RequestBody<'putNip9aRegistration'>): Promise<ResponseBody<'putNip9aRegistration'>>;
  /** `GET /v1/nip9a/registrations`: the user's gateway registrations. */
  nip9aRegistrations(): Promise<ResponseBody<'listNip9aRegistrations'>>;

  /** `POST /v1/notifications/{id}/opened`: the user opened a send-API push (its `notificationId`). */
  notificationOpened(notificationId: string): Promise<ResponseBody<'recordNotificationOpened'>>;

  /**
   * Any route, signed with NIP-98: `body` is sent as JSON. Answers the parsed JSON (null for an
   * empty body); a status outside 2xx throws a {@link PushApiError}.
   */
  request(method: string, path: string, body?: unknown): Promise<unknown>;
}

async function refusal(response: Response): Promise<PushApiError> {
  const text = await response.text();
  let code = `HTTP_${response.status}`;
  let message = text === '' ? response.statusText : text;
  try {
    const parsed = JSON.parse(text) as { code?: unknown; error?: unknown };
    if (typeof parsed.code === 'string') code = parsed.code;
    if (typeof parsed.error === 'string') message = parsed.error;
  } catch {
    // not JSON: the text is the message
  }
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
  return new PushApiError(
    response.status,
    code,
    `${response.status} ${code}: ${message}`,
    Number.isFinite(retryAfter) ? retryAfter : undefined,
  );
}

/** A client of one service for one user. */
export function createPushClient(options: PushClientOptions): PushClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? ((url, init) => fetch(url, init));
  const appHeader: Record<string, string> = options.app === undefined ? {} : { 'x-app': options.app };

  /** One call; answers the response (2xx) or throws its refusal. */
  const send = async (method: string, path: string, body: unknown, signed: boolean): Promise<Response> => {
    const url = `${base}${path}`;
    const json = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { ...appHeader, ...(json === undefined ? {} : { 'content-type': 'application/json' }) };
    const response = signed
      ? await nip98Fetch(options.signer, url, { method, headers, ...(json === undefined ? {} : { body: json }) }, fetchImpl)
      : await fetchImpl(url, { method, headers });
    if (!response.ok) throw await refusal(response);
    return response;
  };
  const json = async <T>(method: string, path: string, body?: unknown, signed = true): Promise<T> => {
    const text = await (await send(method, path, body, signed)).text();
    return (text === '' ? null : JSON.parse(text)) as T;
  };
  const segment = encodeURIComponent;

  const client: PushClient = {
    health: () => json<ResponseBody<'getHealth'>>('GET', '/health', undefined, false),
    async servicePubkey() {
      const { pubkey } = await client.health();
      if (pubkey === null) throw new Error('the service has no key configured (/health answered pubkey: null)');
      return pubkey;
    },
    vapidPublicKey: () => json<ResponseBody<'getVapidPublicKey'>>('GET', '/v1/webpush/vapid-public-key', undefined, false),

    inboxCounts: () => json<ResponseBody<'getInboxCounts'>>('GET', '/v1/inbox/counts'),
    markViewed: (types) => json<ResponseBody<'markInboxViewed'>>('POST', '/v1/inbox/viewed', types === undefined ? undefined : { types }),
    alertWords: () => json<ResponseBody<'getAlertWords'>>('GET', '/v1/alert-words'),
    setAlertWords: (words) => json<ResponseBody<'setAlertWords'>>('PUT', '/v1/alert-words', { words }),
    announcements: () => json<ResponseBody<'getAnnouncements'>>('GET', '/v1/announcements'),

    devices: () => json<ResponseBody<'listDevices'>>('GET', '/v1/devices'),
    async registerDevice(token, registration = {}) {
      const response = await send('PUT', `/v1/devices/${segment(token)}`, registration, true);
      return { ...((await response.json()) as ResponseBody<'registerDevice', 200 | 201>), created: response.status === 201 };
    },
    async removeDevice(tokenOrId) {
      await send('DELETE', `/v1/devices/${segment(tokenOrId)}`, undefined, true);
    },
    setPreferences: (preferences) => json<ResponseBody<'setPreferences'>>('PUT', '/v1/preferences', preferences),

    createNip9aCallback: (relay) => json<ResponseBody<'createNip9aCallback', 201>>('POST', '/v1/nip9a/callbacks', { relay }),
    nip9aCallbacks: () => json<ResponseBody<'listNip9aCallbacks'>>('GET', '/v1/nip9a/callbacks'),
    async revokeNip9aCallback(id) {
      await send('DELETE', `/v1/nip9a/callbacks/${segment(id)}`, undefined, true);
    },
    putNip9aRegistration: (event) => json<ResponseBody<'putNip9aRegistration'>>('PUT', '/v1/nip9a/registrations', event),
    nip9aRegistrations: () => json<ResponseBody<'listNip9aRegistrations'>>('GET', '/v1/nip9a/registrations'),

    notificationOpened: (notificationId) =>
      json<ResponseBody<'recordNotificationOpened'>>('POST', `/v1/notifications/${segment(notificationId)}/opened`, {}),

    request: (method, path, body) => json<unknown>(method.toUpperCase(), path, body),
  };
  return client;
}
