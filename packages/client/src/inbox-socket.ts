/**
 * The inbox socket (`GET /v1/inbox/socket`, docs/inbox.md "Live hints"), kept open: the server
 * sends `{"type", "totalNew"}` whenever one of the user's counters changes. The upgrade request is
 * authenticated with NIP-98 in its `Authorization` header, so the WebSocket implementation must
 * be able to send headers: `ws` on Node (`new WebSocket(url, { headers })`) or any with that
 * constructor shape; a browser's `WebSocket` cannot, so browsers poll `GET /v1/inbox/counts` instead.
 *
 * When the socket closes for any reason but {@link InboxSocket.close} (the server restarted, a
 * proxy dropped it, the server's ping went unanswered, an upgrade was refused), it reconnects after
 * an exponential backoff with jitter, signing a fresh NIP-98 event each time (each is accepted
 * once). Hints are advisory and hints sent while disconnected are lost: `onOpen` runs on every
 * (re)connection, the place to re-read the counts.
 */
import { nip98Authorization } from './nip98.js';
import type { NostrSigner } from './signer.js';
import type { InboxHint } from './types.js';

/** The path of the socket on the service. */
export const INBOX_SOCKET_PATH = '/v1/inbox/socket';

/** What the helper uses of a WebSocket (the WHATWG event interface, which `ws` implements too). */
export interface InboxWebSocket {
  addEventListener(type: 'open', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: (event: unknown) => void): void;
  close(code?: number, reason?: string): void;
}

/** A WebSocket class whose constructor takes request headers, as `ws`'s does. */
export type InboxWebSocketConstructor = new (url: string, options: { headers: Record<string, string> }) => InboxWebSocket;

/** Reconnection delays: `initialMs × factor^attempt`, capped at `maxMs`, each scaled by a random 50–100 %. */
export interface Backoff {
  /** Default 1000. */
  initialMs?: number;
  /** Default 30000. */
  maxMs?: number;
  /** Default 2. */
  factor?: number;
}

export interface InboxSocketOptions {
  /** The service's base URL (`server.public_url`, http(s)): NIP-98 signs `<baseUrl>/v1/inbox/socket`. */
  baseUrl: string;
  signer: NostrSigner;
  /** The WebSocket class, e.g. `ws`'s `WebSocket` on Node. */
  WebSocket: InboxWebSocketConstructor;
  /** The app on a multi-app service (`X-App`). */
  app?: string;
  /** Each hint, in the order received. */
  onHint(hint: InboxHint): void;
  /** Every (re)connection, once open: re-read the counts here, hints sent while closed are lost. */
  onOpen?(): void;
  /** Every close that is not {@link InboxSocket.close}'s, with the delay before the next attempt. */
  onClose?(info: { code: number; reason: string; reconnectInMs: number }): void;
  /** A socket error, or a signing failure (which is retried like a close). */
  onError?(error: unknown): void;
  backoff?: Backoff;
}

export interface InboxSocket {
  /** Whether a socket is open now. */
  readonly connected: boolean;
  /** How many times a socket has opened (1 after the first connection, 2 after the first reconnection, …). */
  readonly connections: number;
  /** Close the socket and stop reconnecting. */
  close(): void;
}

function textOf(data: unknown): string | undefined {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new TextDecoder().decode(data);
  if (ArrayBuffer.isView(data)) return new TextDecoder().decode(data);
  return undefined;
}

function parseHint(data: unknown): InboxHint | undefined {
  const text = textOf(data);
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<InboxHint>;
    if (typeof value.type === 'string' && typeof value.totalNew === 'number') return { type: value.type, totalNew: value.totalNew };
  } catch {
    // not a hint: ignored, as the server sends nothing else
  }
  return undefined;
}

/** Open the inbox socket and keep it open until {@link InboxSocket.close}. */
export function connectInboxSocket(options: InboxSocketOptions): InboxSocket {
  const httpUrl = `${options.baseUrl.replace(/\/+$/, '')}${INBOX_SOCKET_PATH}`;
  const wsUrl = httpUrl.replace(/^http/i, 'ws');
  const initialMs = options.backoff?.initialMs ?? 1000;
  const maxMs = options.backoff?.maxMs ?? 30_000;
  const factor = options.backoff?.factor ?? 2;

  let closed = false;
  let socket: InboxWebSocket | undefined;
  let connected = false;
  let connections = 0;
  /** Failed attempts since the last open: the backoff's exponent. */
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const nextDelay = (): number => {
    const ceiling = Math.min(maxMs, initialMs * factor ** attempt);
    attempt += 1;
    return Math.round(ceiling * (0.5 + Math.random() * 0.5));
  };

  const scheduleReconnect = (code: number, reason: string): void => {
    if (closed) return;
    const reconnectInMs = nextDelay();
    options.onClose?.({ code, reason, reconnectInMs });
    timer = setTimeout(() => void connect(), reconnectInMs);
  };

  const connect = async (): Promise<void> => {
    timer = undefined;
    if (closed) return;
    let authorization: string;
    try {
      authorization = await nip98Authorization(options.signer, { url: httpUrl, method: 'GET' });
    } catch (err) {
      options.onError?.(err);
      scheduleReconnect(0, 'signing failed');
      return;
    }
    // close() may have run while the signer worked (a NIP-07 or NIP-46 signer can take seconds).
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by close() during the await above
    if (closed) return;
    const headers: Record<string, string> = { authorization, ...(options.app === undefined ? {} : { 'x-app': options.app }) };
    const ws = new options.WebSocket(wsUrl, { headers });
    socket = ws;
    ws.addEventListener('open', () => {
      if (socket !== ws) return;
      connected = true;
      connections += 1;
      attempt = 0;
      options.onOpen?.();
    });
    ws.addEventListener('message', (event) => {
      const hint = parseHint(event.data);
      if (hint) options.onHint(hint);
    });
    ws.addEventListener('error', (event) => options.onError?.(event));
    ws.addEventListener('close', (event) => {
      if (socket !== ws) return;
      socket = undefined;
      connected = false;
      scheduleReconnect(event.code, event.reason);
    });
  };

  void connect();
  return {
    get connected() {
      return connected;
    },
    get connections() {
      return connections;
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      const open = socket;
      socket = undefined;
      connected = false;
      open?.close(1000, 'closed by the client');
    },
  };
}
