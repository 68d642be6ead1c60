/**
 * API keys: how they are made, hashed and shown. A key is `npk_` and 32 random bytes in base64url;
 * the store keeps its SHA-256 and its first {@link API_KEY_PREFIX_LENGTH} characters, and its id
 * (what lists show and revocation takes) is separate random text, so neither reveals the key.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ApiKeyRole, NewApiKey } from '../store/port-apikeys.ts';
import type { StorePort } from '../store/port.ts';

const KEY_SCHEME = 'npk_';
const KEY_SECRET_BYTES = 32;
const KEY_ID_BYTES = 8;
/** Characters of a key that lists and logs may show: the scheme and 8 random characters (48 bits). */
export const API_KEY_PREFIX_LENGTH = 12;

/** SHA-256 of a key, lowercase hex: what the store looks keys up by. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The part of a key that may be shown or logged. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX_LENGTH);
}

export interface IssuedApiKey {
  /** The key itself: shown once, never stored. */
  key: string;
  record: NewApiKey;
}

/** A fresh key for `appId` with `role`, and the record the store keeps of it. */
export function issueApiKey(appId: string, role: ApiKeyRole): IssuedApiKey {
  const key = `${KEY_SCHEME}${randomBytes(KEY_SECRET_BYTES).toString('base64url')}`;
  const id = `key_${randomBytes(KEY_ID_BYTES).toString('hex')}`;
  return { key, record: { id, appId, role, hash: hashApiKey(key), prefix: apiKeyPrefix(key) } };
}

/** Attempts at a fresh id and key: a clash of 64 random bits twice in a row means something else is wrong. */
const ISSUE_ATTEMPTS = 3;

/** Issue a key and store it (a clash of random ids or hashes is retried). */
export async function createApiKey(store: StorePort, appId: string, role: ApiKeyRole): Promise<IssuedApiKey> {
  for (let attempt = 0; attempt < ISSUE_ATTEMPTS; attempt++) {
    const issued = issueApiKey(appId, role);
    if (await store.createApiKey(issued.record)) return issued;
  }
  throw new Error(`createApiKey: the store refused ${ISSUE_ATTEMPTS} fresh keys in a row`);
}
