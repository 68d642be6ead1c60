/**
 * Storage of the relays each user reads from (issue 36, the outbox model). Part of
 * {@link StorePort}; implemented by both adapters; tested in `test/store/contract/user-relays.ts`.
 *
 * A user has up to three lists, one per {@link UserRelaySource}; each is replaceable on its own and
 * the newest wins exactly as NIP-01 says of replaceable events: the higher `created_at`, and on a
 * tie the lower event id (first in lexical order). A list that loses is not stored, so an old 10002
 * replayed by a relay never moves a user back.
 *
 * {@link UserRelayStore.userRelayCoverage} answers the listener's question "which relays, for whom":
 * every relay named by a user who has at least one device, with the users it covers, ranked by
 * how many. Lists of users without devices are kept (a device may come back) but cover no one.
 *
 * Not part of this contract: whether a URL may be connected to (the outbound address policy of
 * the listener decides that at connect time); fetching the lists from relays (the engine).
 */

/**
 * Where a list came from: `nip65` the read and unmarked relays of a kind 10002, `dm` the relays of
 * a kind 10050 (where gift wraps reach the user), `app` the `relays` of a device registration (the
 * app knows where its user reads; treated as read relays).
 */
export type UserRelaySource = 'nip65' | 'dm' | 'app';

export const USER_RELAY_SOURCES: readonly UserRelaySource[] = ['nip65', 'dm', 'app'];

/**
 * Most relays kept per list. NIP-65 asks clients to keep lists small (2–4 relays each); a list
 * naming more is cut to its first 16, so one user cannot make the service open hundreds of sockets.
 */
export const MAX_RELAYS_PER_LIST = 16;

/** Longest relay URL kept (characters); longer ones are dropped, never truncated. */
export const MAX_RELAY_URL_CHARS = 256;

/** One stored list. */
export interface UserRelayList {
  source: UserRelaySource;
  /** Id of the event the list came from (64 hex), the tie-breaker of equal `createdAt`. */
  eventId: string;
  /** The event's `created_at`, unix seconds. */
  createdAt: number;
  /** Normalised relay URLs ({@link normalizeRelayUrl}), deduplicated, at most {@link MAX_RELAYS_PER_LIST}. */
  relays: string[];
}

/** What {@link UserRelayStore.putUserRelayList} did: stored, or refused as not newer than the stored list. */
export type PutUserRelayListResult = 'stored' | 'stale';

/** A user's lists, null where none is stored (or the stored one is unreadable, which is logged). */
export type UserRelayLists = Record<UserRelaySource, UserRelayList | null>;

/** One relay and the users with devices it covers. */
export interface RelayCoverage {
  url: string;
  /** Pubkeys whose `nip65` or `app` list names the relay, sorted. */
  readers: string[];
  /** Pubkeys whose `dm` list names the relay, sorted. */
  dmReaders: string[];
  /** Distinct users in `readers` ∪ `dmReaders`: the rank of the relay. */
  users: number;
}

export interface UserRelayStore {
  /**
   * Store `list` as the user's list of its source when it is newer than the stored one (higher
   * `createdAt`, or equal and a lower `eventId`); otherwise change nothing and answer 'stale'.
   * The caller normalises the URLs ({@link normalizeRelayList}); an empty list is stored (a user
   * who emptied their 10002 reads nowhere any more).
   */
  putUserRelayList(pubkey: string, list: UserRelayList): Promise<PutUserRelayListResult>;
  /** The lists of each pubkey, in order. [] reads nothing. */
  getUserRelayLists(pubkeys: readonly string[]): Promise<UserRelayLists[]>;
  /**
   * Every relay named by a stored list of a user with at least one device, ranked by users covered
   * (most first, ties by URL), each with its readers and DM readers. The whole picture in one
   * answer: the listener holds it in memory anyway (a pubkey is 64 bytes; 100,000 users over their
   * 3 relays each is some 20 MB) to build its filters.
   */
  userRelayCoverage(): Promise<RelayCoverage[]>;
  /**
   * Record that the coverage of `pubkeys` may have changed, at the store clock's now: their
   * devices came or went (a registration, a deregistration, a token moving to another owner).
   * {@link putUserRelayList} records its own stored lists; this is for the rest. Answered for
   * {@link USER_RELAY_CHANGE_RETENTION_MS}, then dropped; a pubkey is held once, with its latest time.
   */
  noteUserRelayChange(pubkeys: readonly string[]): Promise<void>;
  /**
   * The users whose coverage changed after `sinceMs` (store clock): each pubkey once, with the
   * time of its latest change, oldest first, at most `limit`. A list stored by
   * {@link putUserRelayList} and a {@link noteUserRelayChange} are both here once they resolved.
   * The listener follows this instead of re-reading {@link userRelayCoverage} (issue 36); a caller
   * that gets `limit` entries cannot tell whether more share the last time, so it reads again
   * from an earlier time or falls back to the full read.
   */
  userRelayChangesSince(sinceMs: number, limit: number): Promise<UserRelayChange[]>;
  /**
   * One page of the users that have at least one device and neither a `nip65` nor a `dm` list:
   * those whose relay lists were never looked up (they registered before the feature, or in a
   * process that does not fetch). `cursor` null starts a walk; the answer's `cursor` continues it,
   * null when the walk is done. A page holds about `limit` pubkeys (a hint: SQLite gives at most
   * that many, a Redis hash scan step may give more) and may hold none while the walk goes on; a
   * pubkey may come twice in a walk. Every user who is such a user for the whole
   * walk is in some page.
   */
  usersWithoutRelayLists(cursor: string | null, limit: number): Promise<{ pubkeys: string[]; cursor: string | null }>;
}

/** One entry of {@link UserRelayStore.userRelayChangesSince}. */
export interface UserRelayChange {
  pubkey: string;
  /** When the change was recorded, ms of the store clock. */
  changedMs: number;
}

/**
 * How long a recorded change is kept at least (ms). The listener reads the changes every few
 * seconds and re-reads the whole coverage far more often than this; an entry older than it is
 * only trimmed, never needed.
 */
export const USER_RELAY_CHANGE_RETENTION_MS = 86_400_000;

/**
 * The list stored for a user whose lookup found no kind 10002 (and no 10050): an empty `nip65`
 * list at `createdAt` 0, which any real 10002 replaces. It marks the user as looked up, so the
 * backfill ({@link UserRelayStore.usersWithoutRelayLists}) does not ask the relays for them again.
 */
export const NO_RELAY_LIST_FOUND: UserRelayList = { source: 'nip65', eventId: '', createdAt: 0, relays: [] };

/**
 * A relay URL in the one form lists are compared and stored in, or null when it is not a usable
 * relay URL: `ws:` or `wss:` only, no credentials, no fragment, host lower-cased (by `URL`), a bare
 * trailing `/` dropped (`wss://relay.example/` and `wss://relay.example` are one relay), at most
 * {@link MAX_RELAY_URL_CHARS}.
 */
export function normalizeRelayUrl(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_RELAY_URL_CHARS) return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') return null;
  if (url.username !== '' || url.password !== '' || url.hostname === '') return null;
  url.hash = '';
  let text = url.toString();
  if (url.pathname === '/' && url.search === '') text = text.slice(0, -1);
  return text.length > MAX_RELAY_URL_CHARS ? null : text;
}

/** Normalised, deduplicated, in the order given, cut to {@link MAX_RELAYS_PER_LIST}; unusable entries dropped. */
export function normalizeRelayList(raw: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const entry of raw) {
    const url = normalizeRelayUrl(entry);
    if (url !== null && !out.includes(url)) out.push(url);
    if (out.length === MAX_RELAYS_PER_LIST) break;
  }
  return out;
}

/** True when `candidate` replaces `stored` under NIP-01's rule for replaceable events. */
export function replacesRelayList(
  candidate: Pick<UserRelayList, 'createdAt' | 'eventId'>,
  stored: Pick<UserRelayList, 'createdAt' | 'eventId'> | null,
): boolean {
  if (stored === null) return true;
  if (candidate.createdAt !== stored.createdAt) return candidate.createdAt > stored.createdAt;
  return candidate.eventId < stored.eventId;
}

/** The stored JSON document of a list (the source is its key, not part of the document). */
export function encodeUserRelayList(list: UserRelayList): string {
  return JSON.stringify({ eventId: list.eventId, createdAt: list.createdAt, relays: list.relays });
}

/** A stored document back, or null when it is not one. */
export function decodeUserRelayList(source: UserRelaySource, raw: string): UserRelayList | null {
  let document: unknown;
  try {
    document = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof document !== 'object' || document === null) return null;
  const { eventId, createdAt, relays } = document as Record<string, unknown>;
  if (typeof eventId !== 'string' || typeof createdAt !== 'number' || !Number.isInteger(createdAt)) return null;
  if (!Array.isArray(relays) || !relays.every((r): r is string => typeof r === 'string')) return null;
  return { source, eventId, createdAt, relays };
}

export function isUserRelaySource(value: string): value is UserRelaySource {
  return (USER_RELAY_SOURCES as readonly string[]).includes(value);
}

/** No list of any source. */
export const noUserRelayLists = (): UserRelayLists => ({ nip65: null, dm: null, app: null });

/**
 * The ranking both adapters answer {@link UserRelayStore.userRelayCoverage} with, from the lists of
 * the users that have devices (each user once).
 */
export function rankRelayCoverage(users: Iterable<{ pubkey: string; lists: UserRelayLists }>): RelayCoverage[] {
  const byUrl = new Map<string, { readers: Set<string>; dmReaders: Set<string> }>();
  const entry = (url: string) => {
    let found = byUrl.get(url);
    if (found === undefined) {
      found = { readers: new Set(), dmReaders: new Set() };
      byUrl.set(url, found);
    }
    return found;
  };
  for (const { pubkey, lists } of users) {
    for (const url of lists.nip65?.relays ?? []) entry(url).readers.add(pubkey);
    for (const url of lists.app?.relays ?? []) entry(url).readers.add(pubkey);
    for (const url of lists.dm?.relays ?? []) entry(url).dmReaders.add(pubkey);
  }
  const ranked: RelayCoverage[] = [];
  for (const [url, { readers, dmReaders }] of byUrl) {
    let users = readers.size;
    for (const pubkey of dmReaders) if (!readers.has(pubkey)) users++;
    ranked.push({ url, readers: [...readers].sort(), dmReaders: [...dmReaders].sort(), users });
  }
  return ranked.sort((a, b) => b.users - a.users || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}
