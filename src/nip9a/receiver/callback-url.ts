/**
 * The parts of a NIP-9a callback URL (`{server.public_url}/nip9a/cb/{secret}`) and of the relay
 * URLs callbacks are bound to: making a secret, hashing it for the store, redacting it for a
 * listing, and normalising relay URLs so the one a relay names in its POST compares equal to the
 * one the user named.
 */
import { createHash, randomBytes } from 'node:crypto';

/** Path under which callback URLs live; the secret is the one segment after it. */
export const CALLBACK_PATH_PREFIX = '/nip9a/cb/';

/** Random bytes of a secret: 256 bits, twice the floor of 128, at no cost. */
export const SECRET_BYTES = 32;
/** Characters of a secret: base64url of {@link SECRET_BYTES} bytes, unpadded. */
export const SECRET_CHARS = Math.ceil((SECRET_BYTES * 4) / 3);
/** Characters of the secret a listing shows (24 bits: enough to tell URLs apart, useless to guess the rest). */
export const SECRET_HINT_CHARS = 4;

const SECRET_PATTERN = new RegExp(`^[A-Za-z0-9_-]{${SECRET_CHARS}}$`);

export function newSecret(): string {
  return randomBytes(SECRET_BYTES).toString('base64url');
}

/** Whether `value` has the shape of a secret this server makes (anything else is unknown without a store read). */
export function isSecretShaped(value: string): boolean {
  return SECRET_PATTERN.test(value);
}

/** What the store keeps instead of the secret: its SHA-256, lowercase hex. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function callbackUrl(publicUrl: string, secret: string): string {
  return `${publicUrl}${CALLBACK_PATH_PREFIX}${secret}`;
}

/** The URL as a listing shows it: the first characters of the secret, then an ellipsis. */
export function redactedCallbackUrl(publicUrl: string, secretHint: string): string {
  return `${publicUrl}${CALLBACK_PATH_PREFIX}${secretHint}…`;
}

/** Longest relay URL accepted (a relay URL is a host and a short path). */
export const MAX_RELAY_URL_CHARS = 512;

/**
 * A relay URL in the form callbacks compare (reference §1.4): `ws(s)://host[:port]/path`, scheme
 * and host lowercased, the default port dropped, the path ending in `/`, no query, fragment or
 * credentials. Null when `value` is not a ws:// or wss:// URL of that kind.
 *
 * @example normalizeRelayUrl('WSS://Relay.Example:443') // 'wss://relay.example/'
 */
export function normalizeRelayUrl(value: string): string | null {
  if (value.length === 0 || value.length > MAX_RELAY_URL_CHARS) return null;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'wss:' && url.protocol !== 'ws:') return null;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || url.hostname === '') return null;
  // WHATWG URL already lowercases the scheme and host and drops a default port.
  const path = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
  return `${url.protocol}//${url.host}${path}`;
}
