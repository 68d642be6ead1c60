/**
 * Per-client quotas of things that cost storage (issue 35): how many distinct members (new
 * callback URLs, keys that set alert words) one client address may add per window, counted in the
 * store so every replica sharing it shares the count. Part of {@link StorePort}; implemented by both
 * adapters; tested in `test/store/contract/client-quotas.ts`.
 *
 * A quota is a fixed window (`windowMs`, aligned to multiples of it since the epoch, so a day
 * window is a UTC day) holding a set of members. Taking a member already in the window's set is
 * always allowed and changes nothing (a user setting their words again costs nothing); a new
 * member is added while the set holds fewer than `limit`, and refused after. The set expires with
 * its window (Redis key expiry; SQLite rows swept by the store clock), so a quota's whole storage is
 * `limit` members per client per live window.
 *
 * @remarks Not part of this contract: what a client address is (`src/api/client-address.ts`), which
 * routes take which quota (the API), request rate limits (another layer). Scopes, clients and
 * members are opaque strings of the caller's (a client address may hold `:`).
 */

/** One quota check. */
export interface ClientQuotaRequest {
  /** What is counted (`nip9a_callbacks`, `alert_word_users`): quotas of two scopes never meet. */
  scope: string;
  /** The client address. */
  client: string;
  /** What this request adds: a new callback's id, the key setting alert words. */
  member: string;
  /** Most distinct members per window, at least 1. */
  limit: number;
  /** Window length, at least 1 ms. */
  windowMs: number;
}

export interface ClientQuotaResult {
  /** True when the member was in the window already, or was added now. */
  allowed: boolean;
  /** Distinct members in the window after this request. */
  used: number;
  /** Milliseconds until the window ends (when a refused client may try again); at least 1. */
  retryAfterMs: number;
}

export interface ClientQuotaStore {
  /** Take `member` into the quota of (`scope`, `client`) for the current window, atomically (see the module header). */
  takeClientQuota(request: ClientQuotaRequest): Promise<ClientQuotaResult>;
}

/** The start of the window `nowMs` falls in. */
export function clientQuotaWindowStartMs(nowMs: number, windowMs: number): number {
  return Math.floor(nowMs / windowMs) * windowMs;
}
