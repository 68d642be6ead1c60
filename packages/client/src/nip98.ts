/**
 * NIP-98 HTTP auth as nostr-push checks it (src/nostr/nip98.ts of the server): `Authorization:
 * Nostr <base64 of a signed kind 27235 event>` whose `u` is the absolute URL requested (query
 * included; behind a proxy, the service's public URL), `method` the HTTP method and, when the
 * request has a body, `payload` the SHA-256 (hex) of its exact bytes. `created_at` must be within
 * 60 s of the server's clock, and each event is accepted once: a random `nonce` tag keeps two
 * identical requests in the same second apart.
 *
 * Browser-safe: the hash is WebCrypto's and the encoding `btoa`, both global in Node 20.
 */
import type { NostrSigner } from './signer.js';

/** The NIP-98 event kind. */
export const KIND_HTTP_AUTH = 27235;

/** One request to authorize. */
export interface Nip98Request {
  /** The absolute URL, exactly as requested. */
  url: string;
  method: string;
  /** The exact bytes (or string, sent as UTF-8) of the body; absent for none. */
  body?: Uint8Array | string | undefined;
}

const encoder = new TextEncoder();

function toHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** A random nonce (16 bytes, hex). */
function nonce(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(16)));
}

/** The SHA-256 of `body`, hex: a NIP-98 `payload` tag's value. */
export async function payloadHash(body: Uint8Array | string): Promise<string> {
  // A copy: WebCrypto takes only views of a plain ArrayBuffer.
  const bytes = typeof body === 'string' ? encoder.encode(body) : new Uint8Array(body);
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)));
}

/** The `Authorization` header value for one request, signed by `signer` now. */
export async function nip98Authorization(signer: NostrSigner, request: Nip98Request): Promise<string> {
  const tags = [
    ['u', request.url],
    ['method', request.method.toUpperCase()],
  ];
  const body = request.body;
  if (body !== undefined && (typeof body === 'string' ? body !== '' : body.byteLength > 0)) tags.push(['payload', await payloadHash(body)]);
  tags.push(['nonce', nonce()]);
  const event = await signer.signEvent({ kind: KIND_HTTP_AUTH, created_at: Math.floor(Date.now() / 1000), tags, content: '' });
  return `Nostr ${toBase64(encoder.encode(JSON.stringify(event)))}`;
}

/** A fetch-like function (the global `fetch`, or another with its shape). */
export type FetchFunction = (url: string, init: RequestInit) => Promise<Response>;

/** What {@link nip98Fetch} sends. */
export interface Nip98FetchInit {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as is; the `payload` tag hashes exactly these bytes. A JSON body also needs `content-type`. */
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

/**
 * `fetch` with a fresh NIP-98 `Authorization` for this exact URL, method and body. The URL must
 * be the one the server checks against: its `server.public_url` and the path.
 */
export async function nip98Fetch(
  signer: NostrSigner,
  url: string,
  init: Nip98FetchInit = {},
  fetchImpl: FetchFunction = fetch,
): Promise<Response> {
  const method = (init.method ?? 'GET').toUpperCase();
  const authorization = await nip98Authorization(signer, { url, method, body: init.body });
  return fetchImpl(url, {
    method,
    headers: { ...init.headers, authorization },
    ...(init.body === undefined ? {} : { body: typeof init.body === 'string' ? init.body : new Uint8Array(init.body) }),
    ...(init.signal === undefined ? {} : { signal: init.signal }),
  });
}
