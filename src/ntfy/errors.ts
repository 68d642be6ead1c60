/**
 * Every error the ntfy server answers with, in one catalogue like ntfy's `server/errors.go`: a
 * stable numeric code (ntfy's own where ntfy has the case), the HTTP status, the message and a
 * documentation link. The body is ntfy's exact shape, `{"code","http","error","link"}` and a
 * newline, because UnifiedPush clients and app servers written against ntfy parse it.
 *
 * Handlers throw {@link NtfyError}; `routes.ts` writes it. WebSocket upgrades that fail get only
 * the status line, as ntfy does.
 */

const DOCS = 'https://ntfy.sh/docs';

export const NTFY_ERRORS = {
  // ntfy's generic 40000, for documented options this server refuses as a whole (templates, sequence IDs).
  NOT_SUPPORTED: { code: 40000, http: 400, error: 'invalid request', link: `${DOCS}/publish/` },
  EMAIL_DISABLED: { code: 40001, http: 400, error: 'e-mail notifications are not enabled', link: `${DOCS}/config/#e-mail-notifications` },
  DELAY_NO_CACHE: { code: 40002, http: 400, error: 'cannot disable cache for delayed message', link: '' },
  DELAY_CANNOT_PARSE: {
    code: 40004,
    http: 400,
    error: 'invalid delay parameter: unable to parse delay',
    link: `${DOCS}/publish/#scheduled-delivery`,
  },
  DELAY_TOO_SMALL: {
    code: 40005,
    http: 400,
    error: 'invalid delay parameter: too small, please refer to the docs',
    link: `${DOCS}/publish/#scheduled-delivery`,
  },
  DELAY_TOO_LARGE: {
    code: 40006,
    http: 400,
    error: 'invalid delay parameter: too large, please refer to the docs',
    link: `${DOCS}/publish/#scheduled-delivery`,
  },
  PRIORITY_INVALID: { code: 40007, http: 400, error: 'invalid priority', link: `${DOCS}/publish/#message-priority` },
  SINCE_INVALID: { code: 40008, http: 400, error: 'invalid since parameter', link: `${DOCS}/subscribe/api/#fetch-cached-messages` },
  TOPIC_INVALID: { code: 40009, http: 400, error: 'invalid request: topic invalid', link: `${DOCS}/publish/` },
  TOPIC_DISALLOWED: { code: 40010, http: 400, error: 'invalid request: topic name is not allowed', link: `${DOCS}/publish/` },
  MESSAGE_NOT_UTF8: { code: 40011, http: 400, error: 'invalid message: message must be UTF-8 encoded', link: '' },
  ATTACHMENT_URL_INVALID: {
    code: 40013,
    http: 400,
    error: 'invalid request: attachment URL is invalid',
    link: `${DOCS}/publish/#attachments`,
  },
  ATTACHMENTS_NOT_ALLOWED: {
    code: 40014,
    http: 400,
    error: 'invalid request: attachments not allowed (a body that is not UTF-8 needs UnifiedPush mode, ?up=1)',
    link: `${DOCS}/config/#attachments`,
  },
  WEBSOCKET_UPGRADE_MISSING: {
    code: 40016,
    http: 400,
    error: 'invalid request: client not using the websocket protocol',
    link: `${DOCS}/subscribe/api/#websockets`,
  },
  ACTIONS_INVALID: { code: 40018, http: 400, error: 'invalid request: actions invalid', link: `${DOCS}/publish/#action-buttons` },
  ICON_URL_INVALID: { code: 40021, http: 400, error: 'invalid request: icon URL is invalid', link: `${DOCS}/publish/#icons` },
  JSON_INVALID: {
    code: 40024,
    http: 400,
    error: 'invalid request: request body must be message JSON',
    link: `${DOCS}/publish/#publish-as-json`,
  },
  CALLS_DISABLED: { code: 40032, http: 400, error: 'invalid request: calling is disabled', link: `${DOCS}/config/#phone-calls` },
  // ntfy's limits on what a message's title and tags take (1 KB, 512 bytes), with its codes.
  TITLE_TOO_LARGE: { code: 40057, http: 400, error: 'invalid request: title too large', link: `${DOCS}/publish/#limitations` },
  TAGS_TOO_LARGE: { code: 40058, http: 400, error: 'invalid request: tags too large', link: `${DOCS}/publish/#limitations` },
  UNAUTHORIZED: { code: 40101, http: 401, error: 'unauthorized', link: `${DOCS}/publish/#authentication` },
  FORBIDDEN: { code: 40301, http: 403, error: 'forbidden', link: `${DOCS}/publish/#authentication` },
  NOT_FOUND: { code: 40401, http: 404, error: 'page not found', link: '' },
  JSON_BODY_TOO_LARGE: { code: 41303, http: 413, error: 'JSON body too large', link: `${DOCS}/publish/#publish-as-json` },
  // ntfy truncates an oversized UnifiedPush body, which corrupts the ciphertext; RFC 8030 §7.2 allows 413 above 4096 bytes.
  MESSAGE_TOO_LARGE: { code: 41304, http: 413, error: 'message too large', link: `${DOCS}/publish/#limitations` },
  TOO_MANY_REQUESTS: { code: 42901, http: 429, error: 'limit reached: too many requests', link: `${DOCS}/publish/#limitations` },
  TOO_MANY_SUBSCRIPTIONS: {
    code: 42903,
    http: 429,
    error: 'limit reached: too many active subscriptions',
    link: `${DOCS}/publish/#limitations`,
  },
  INTERNAL: { code: 50001, http: 500, error: 'internal server error', link: '' },
  SUBSCRIBE_NOT_SERVED: { code: 50301, http: 503, error: 'subscriptions are not served by this process (no pusher role)', link: '' },
} as const satisfies Record<string, { code: number; http: number; error: string; link: string }>;

export type NtfyErrorName = keyof typeof NTFY_ERRORS;

/** The JSON body of an ntfy error; `link` is left out when empty, as ntfy's omitempty does. */
export interface NtfyErrorBody {
  code: number;
  http: number;
  error: string;
  link?: string;
}

export class NtfyError extends Error {
  readonly code: number;
  readonly http: number;
  readonly link: string;

  constructor(
    readonly errorName: NtfyErrorName,
    detail?: string,
  ) {
    const entry = NTFY_ERRORS[errorName];
    super(detail ? `${entry.error}: ${detail}` : entry.error);
    this.name = 'NtfyError';
    this.code = entry.code;
    this.http = entry.http;
    this.link = entry.link;
  }

  toJSON(): NtfyErrorBody {
    return { code: this.code, http: this.http, error: this.message, ...(this.link ? { link: this.link } : {}) };
  }
}

/** Status text for the bare status line a failed WebSocket upgrade gets. */
export const HTTP_STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
