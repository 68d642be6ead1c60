/**
 * Users' relay lists (issue 36, the outbox model): where each user with a device reads, taken from
 * their kind 10002 (NIP-65: the `read` relays and the unmarked ones), their kind 10050 (NIP-17: the
 * relays gift wraps should reach them on) and the `relays` of a registration payload, and kept in
 * the store (port-user-relays.ts), the newest of each source winning. The listener reads them back
 * from the store and watches those relays (`listener/user-relays.ts`).
 *
 * Lists arrive three ways, all through {@link storeUserRelayList}:
 * - live, on the configured relays, whose live subscription carries kinds 10002 and 10050 while
 *   the feature is on (a user changing their list is followed within one event);
 * - fetched, when a device is registered (by a 3079 or over HTTP, both through
 *   `applyControlPayload`) and by the backfill of users registered before (`user-relay-backfill.ts`):
 *   {@link UserRelayListFetcher} asks the configured and profile relays for the user's two lists,
 *   in batches, without holding up the inbound queue;
 * - registered: a 3079 (or HTTP registration) payload's `relays`, source `app`.
 *
 * Lists of users without a device are not stored: a relay of the world's 10002s would otherwise
 * fill the store with people nobody pushes to.
 */
import { isEventRejection, parseEvent, type EventVerifier, type NostrEvent } from '../nostr/event.ts';
import { DM_RELAY_LIST, RELAY_LIST } from '../nostr/kinds.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { StorePort } from '../store/port.ts';
import {
  NO_RELAY_LIST_FOUND,
  normalizeRelayList,
  replacesRelayList,
  type PutUserRelayListResult,
  type UserRelayList,
  type UserRelaySource,
} from '../store/port-user-relays.ts';
import type { RelayQueryFunction } from './relay-query.ts';

/** The kinds that carry a user's relay lists. */
export const USER_RELAY_LIST_KINDS: readonly number[] = [RELAY_LIST, DM_RELAY_LIST];

export function isUserRelayListEvent(event: Pick<NostrEvent, 'kind'>): boolean {
  return event.kind === RELAY_LIST || event.kind === DM_RELAY_LIST;
}

/**
 * The list an event carries: a 10002's `r` tags without a marker or marked `read` (NIP-65: where
 * others should send what tags the user), a 10050's `relay` tags. Null for any other kind.
 */
export function relayListOf(event: NostrEvent): UserRelayList | null {
  let source: UserRelaySource;
  let urls: string[];
  if (event.kind === RELAY_LIST) {
    source = 'nip65';
    urls = event.tags.filter((t) => t[0] === 'r' && (t[2] === undefined || t[2] === '' || t[2] === 'read')).map((t) => t[1] ?? '');
  } else if (event.kind === DM_RELAY_LIST) {
    source = 'dm';
    urls = event.tags.filter((t) => t[0] === 'relay').map((t) => t[1] ?? '');
  } else {
    return null;
  }
  return { source, eventId: event.id, createdAt: event.created_at, relays: normalizeRelayList(urls) };
}

/**
 * The `relays` of a registration payload (a 3079's content, the body of an HTTP registration):
 * null when absent, a list (possibly empty) when present, a reason when it is not a list of strings.
 */
export function registrationRelays(payload: Record<string, unknown>): string[] | null | { invalid: string } {
  const raw = payload.relays;
  if (raw === undefined || raw === null) return null;
  if (!Array.isArray(raw) || !raw.every((r) => typeof r === 'string')) return { invalid: 'relays must be a list of relay URLs' };
  return normalizeRelayList(raw);
}

export interface UserRelayListDeps {
  store: Pick<StorePort, 'listDevices' | 'putUserRelayList'>;
  metrics: Metrics;
  logger: Logger;
}

export type StoreUserRelayListOutcome = PutUserRelayListResult | 'no_device';

/** Store `list` for `pubkey` when they have a device; counted by source and outcome. Store errors propagate. */
export async function storeUserRelayList(deps: UserRelayListDeps, pubkey: string, list: UserRelayList): Promise<StoreUserRelayListOutcome> {
  let outcome: StoreUserRelayListOutcome;
  if ((await deps.store.listDevices(pubkey)).length === 0) outcome = 'no_device';
  else outcome = await deps.store.putUserRelayList(pubkey, list);
  deps.metrics.userRelayLists.inc({ source: list.source, outcome });
  if (outcome === 'stored') deps.logger.debug({ pubkey, source: list.source, relays: list.relays.length }, 'user relay list stored');
  return outcome;
}

/**
 * The `relays` of a registration payload (issue 36), for both registration paths: when present and
 * valid they become the user's `app` list, replaced only by a newer registration's. `origin` is
 * the registering event (its id and `created_at`); an HTTP registration passes a digest of its
 * body and the time it arrived. Absent relays change nothing; invalid ones change nothing and say
 * why (an event logs and ignores them, the HTTP path answers 400). Store errors propagate.
 */
export async function applyRegistrationRelays(
  deps: UserRelayListDeps,
  pubkey: string,
  payload: Record<string, unknown>,
  origin: { id: string; created_at: number },
): Promise<{ outcome: 'absent' } | { outcome: 'invalid'; reason: string } | { outcome: StoreUserRelayListOutcome }> {
  const relays = registrationRelays(payload);
  if (relays === null) return { outcome: 'absent' };
  if (!Array.isArray(relays)) return { outcome: 'invalid', reason: relays.invalid };
  const list: UserRelayList = { source: 'app', eventId: origin.id, createdAt: origin.created_at, relays };
  return { outcome: await storeUserRelayList(deps, pubkey, list) };
}

/**
 * What both registration paths (a 3079, `PUT /v1/devices/{token}`) are given when user relays are
 * on, through `applyControlPayload`: one per app and process (`roles/user-relays.ts`).
 */
export interface UserRelayRegistration {
  metrics: Metrics;
  /** Ask the relays for the user's kind 10002 and 10050, in the background ({@link UserRelayListFetcher.request}). */
  requestLists(pubkey: string): void;
}

/** Pubkeys per fetch query: one REQ with up to this many authors to each relay. */
export const RELAY_LIST_FETCH_BATCH = 50;
/** How long requests gather before a fetch starts (ms): registrations arrive in bursts. */
export const RELAY_LIST_FETCH_GATHER_MS = 200;

export interface UserRelayListFetcherOptions extends UserRelayListDeps {
  /** The configured and profile relays, asked for the lists. */
  relays: readonly string[];
  query: RelayQueryFunction;
  verifier: EventVerifier;
  queryTimeoutMs: number;
  gatherMs?: number;
}

/**
 * Fetches the relay lists of users who just registered a device, in the background: {@link request}
 * returns at once; requests gathered over {@link RELAY_LIST_FETCH_GATHER_MS} are asked together
 * (one REQ of up to {@link RELAY_LIST_FETCH_BATCH} authors per relay), the newest verified list of
 * each kind and author is stored. A failed fetch is logged and dropped: the user's next list,
 * live on the configured relays, is taken as it comes.
 */
export class UserRelayListFetcher {
  private readonly pending = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: UserRelayListFetcherOptions) {}

  request(pubkey: string): void {
    this.requestAll([pubkey]);
  }

  /** {@link request} for each of `pubkeys`. */
  requestAll(pubkeys: readonly string[]): void {
    if (this.closed || this.options.relays.length === 0 || pubkeys.length === 0) return;
    for (const pubkey of pubkeys) this.pending.add(pubkey);
    if (this.timer !== null) return;
    this.timer = setTimeout(() => void this.flush(), this.options.gatherMs ?? RELAY_LIST_FETCH_GATHER_MS);
    // A pending fetch is best effort: it never keeps a stopping process alive.
    this.timer.unref();
  }

  /** Starts the gathered requests now, and resolves when every fetch started so far is done. */
  async flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const batch = [...this.pending];
    this.pending.clear();
    if (batch.length > 0) this.running = this.running.then(() => this.fetchAll(batch));
    await this.running;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.pending.clear();
    await this.running;
  }

  private async fetchAll(pubkeys: string[]): Promise<void> {
    for (let i = 0; i < pubkeys.length && !this.closed; i += RELAY_LIST_FETCH_BATCH) {
      const batch = pubkeys.slice(i, i + RELAY_LIST_FETCH_BATCH);
      try {
        await this.fetchBatch(batch);
      } catch (err) {
        this.options.logger.warn({ users: batch.length, err: (err as Error).message }, "fetching users' relay lists failed");
      }
    }
  }

  /**
   * One REQ per relay for `authors`; the newest list of each kind and author is stored. When some
   * relay answered completely (EOSE) and no relay had either list of an author, the author gets
   * {@link NO_RELAY_LIST_FOUND}: looked up, so the backfill does not ask again (a real 10002 later
   * replaces it). When no relay answered completely nothing is marked, and the next walk asks again.
   */
  private async fetchBatch(authors: string[]): Promise<void> {
    const { query, relays, verifier, queryTimeoutMs } = this.options;
    let complete = 0;
    const raw = await query(relays, { authors, kinds: [...USER_RELAY_LIST_KINDS] }, queryTimeoutMs, (_relay, reason) => {
      if (reason === 'eose') complete++;
    });
    const wanted = new Set(authors);
    const newest = new Map<string, UserRelayList>();
    for (const candidate of raw) {
      const event = parseEvent(candidate);
      if (isEventRejection(event) || !wanted.has(event.pubkey) || !isUserRelayListEvent(event)) continue;
      if (!verifier.verify(event)) continue;
      const list = relayListOf(event);
      if (list === null) continue;
      const key = `${event.pubkey}:${list.source}`;
      if (replacesRelayList(list, newest.get(key) ?? null)) newest.set(key, list);
    }
    const found = new Set<string>();
    for (const [key, list] of newest) {
      const pubkey = key.slice(0, key.indexOf(':'));
      found.add(pubkey);
      await storeUserRelayList(this.options, pubkey, list);
    }
    if (complete === 0) return;
    for (const pubkey of authors) if (!found.has(pubkey)) await this.options.store.putUserRelayList(pubkey, NO_RELAY_LIST_FOUND);
  }
}
