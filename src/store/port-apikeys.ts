/**
 * Storage operations of the API keys that app servers and operators call the HTTP API with. Part
 * of {@link StorePort}; implemented by both adapters; tested in `test/store/contract/apikeys.ts`.
 *
 * Model. A key belongs to one app and has one role (`send`: the send API; `admin`: everything of
 * its app, and the admin routes). Only the SHA-256 of the key (lowercase hex) is stored, with a
 * short prefix of the key for operators to recognise it by; the key itself is shown once, when it
 * is created (`nostr-push apps keys create`), and never stored or logged.
 *
 * Revocation. A revoked key stays listed (with its revocation time) and is never found by
 * {@link ApiKeyStore.findApiKeyByHash} again. Callers look keys up through the store on every
 * request (or cache for at most a second), so a revocation reaches every replica within a second.
 *
 * Last use. {@link ApiKeyStore.touchApiKeyUse} records when a key was last used, for operators
 * deciding what to revoke (the console's API keys page). Callers throttle it (at most one write per
 * key per minute per process, `platform/api-key-use.ts`), so the time is approximate to a minute.
 *
 * Time: `createdAtMs` and `revokedAtMs` come from the store clock; `lastUsedAtMs` is the caller's.
 */

/** What a key may do. `admin` includes everything `send` may do. */
export type ApiKeyRole = 'send' | 'admin';

export const API_KEY_ROLES: readonly ApiKeyRole[] = ['send', 'admin'];

/** A key as handed to {@link ApiKeyStore.createApiKey}. */
export interface NewApiKey {
  /** Public id of the key (what `apps keys list` shows and `apps keys revoke` takes). */
  id: string;
  appId: string;
  role: ApiKeyRole;
  /** SHA-256 of the whole key, lowercase hex. */
  hash: string;
  /** The first characters of the key, for recognising it in lists and logs. */
  prefix: string;
}

/** A stored key. */
export interface ApiKeyRecord extends NewApiKey {
  createdAtMs: number;
  /** When it was revoked; null while it is live. */
  revokedAtMs: number | null;
  /** The latest use recorded by {@link ApiKeyStore.touchApiKeyUse}; null when never recorded. */
  lastUsedAtMs: number | null;
}

export interface ApiKeyStore {
  /**
   * Store a new key, created now. False (nothing written) when the id or the hash is already
   * stored, revoked or not.
   */
  createApiKey(key: NewApiKey): Promise<boolean>;

  /** The live key with this hash; null when there is none or it was revoked. */
  findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null>;

  /** Every key of `appId` (or of every app when null), revoked ones included, oldest first (ties by id). */
  listApiKeys(appId: string | null): Promise<ApiKeyRecord[]>;

  /** Revoke a live key now. False when the id is unknown or the key was already revoked. */
  revokeApiKey(id: string): Promise<boolean>;

  /**
   * Record that key `id` was used at `atMs`: its `lastUsedAtMs` becomes the later of the stored one
   * and `atMs` (replicas' writes arriving out of order never move it back). Revoked keys are
   * recorded too (a request may have raced the revocation). False, and nothing written, when the id
   * is unknown.
   */
  touchApiKeyUse(id: string, atMs: number): Promise<boolean>;
}
