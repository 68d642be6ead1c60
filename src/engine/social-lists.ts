/**
 * A recipient's own Nostr lists, as the mute and "only people I follow" gates read them
 * (issues 16 and 36): the public items of their kind 10000 mute list (NIP-51: pubkeys, hashtags,
 * words, threads; `nostr/nip51-mutes.ts`) and the `p` tags of their kind 3 contact list (NIP-02).
 *
 * Both are replaceable events, so the newest verified one wins by NIP-01 rules (higher
 * `created_at`, a tie to the lower id). They are fetched like kind-0 profiles (`profiles.ts`), with
 * one-shot queries to the main relays for kinds 3, 10000 and 10002 at once — and for every user
 * looked up in the same turn of the event loop at once (one REQ with up to
 * {@link MAX_AUTHORS_PER_QUERY} authors), so a burst of events costs the relays a few queries, not
 * one per recipient. When a list is missing there and the user's kind 10002 (NIP-65) names write
 * relays — where their own events live — those are asked for the missing lists. Results, misses included, are kept in a bounded
 * in-memory cache for `nostr.list_cache_ttl_secs`, oldest dropped first, so a busy recipient costs
 * one query per TTL, and concurrent lookups of one user share one query. The cache is bounded in
 * users (`nostr.list_cache_entries`) and in mute-list items over all of them
 * (`nostr.list_cache_mute_items`): a maxed mute list weighs about 300 KiB, so a bound in users
 * alone would let a few thousand such lists take gigabytes.
 *
 * A lookup never rejects: relays that fail or time out contribute nothing. A missing mute list
 * mutes nobody; a missing contact list is `null`, which the gate reads as "cannot tell" and lets
 * through (a relay outage must not silence a user's notifications).
 */
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { isEventRejection, parseEvent, type EventVerifier, type NostrEvent } from '../nostr/event.ts';
import { CONTACTS, MUTE_LIST, RELAY_LIST } from '../nostr/kinds.ts';
import { EMPTY_MUTE_LIST, parseMuteList, type BoundedMuteItem, type MuteList } from '../nostr/nip51-mutes.ts';
import { isHexPubkey } from '../nostr/tags.ts';
import type { Clock } from '../store/port.ts';
import { systemClock } from '../util/clock.ts';
import { TurnBatcher } from '../util/turn-batcher.ts';
import type { RelayQueryFunction } from './relay-query.ts';

/** Write relays of a kind 10002 asked at most (NIP-65 advises clients to keep lists to 2–4). */
export const MAX_OUTBOX_RELAYS = 4;
/** Users whose lists one REQ asks for (relays commonly accept a few hundred authors per filter). */
export const MAX_AUTHORS_PER_QUERY = 100;
/** Events one relay may return per user of a batched query: the three replaceable kinds, plus stale copies some relays keep. */
const EVENTS_PER_AUTHOR = 6;

export interface SocialLists {
  /** The public part of the newest kind 10000 ({@link EMPTY_MUTE_LIST} when none was found). */
  mutes: MuteList;
  /** Pubkeys of the newest kind 3; null when no contact list was found. */
  follows: ReadonlySet<string> | null;
}

export interface SocialListCacheOptions {
  /** The main relays (`nostr.relays`). */
  relays: readonly string[];
  /**
   * The one-shot relay query. Batched queries return up to {@link EVENTS_PER_AUTHOR} events per
   * user from each relay, so its per-relay event cap must allow that
   * ({@link socialListQueryCap}).
   */
  queryRelays: RelayQueryFunction;
  verifier: EventVerifier;
  queryTimeoutMs: number;
  /** How long a user's lists are believed (`nostr.list_cache_ttl_secs`). */
  ttlMs: number;
  /** Users remembered at once (`nostr.list_cache_entries`); the oldest are forgotten first. */
  maxEntries: number;
  /** Hashtags, words and threads kept of each mute list (`nostr.mute_list_max_items`); the newest are kept. */
  maxMuteItems: number;
  /**
   * Mute-list items (pubkeys, hashtags, words, threads) held in the cache at once, over all its
   * users (`nostr.list_cache_mute_items`): the oldest users are forgotten first to make room, so
   * memory stays bounded however long the lists of the users cached are. Must be able to hold
   * one list at `maxMuteItems` (config validation checks it); a longer list is not cached.
   */
  maxCachedMuteItems: number;
  logger: Logger;
  metrics?: Metrics;
  clock?: Clock;
}

const NO_LISTS: SocialLists = Object.freeze({ mutes: EMPTY_MUTE_LIST, follows: null });

/** NIP-01 replaceable order: the higher created_at wins, a tie goes to the lower id. */
export function isNewerReplaceable(candidate: NostrEvent, current: NostrEvent | undefined): boolean {
  if (current === undefined) return true;
  if (candidate.created_at !== current.created_at) return candidate.created_at > current.created_at;
  return candidate.id < current.id;
}

/** The valid hex pubkeys of an event's `p` tags. */
export function listedPubkeys(event: NostrEvent): Set<string> {
  const pubkeys = new Set<string>();
  for (const tag of event.tags) {
    const value = tag[1]?.toLowerCase();
    if (tag[0] === 'p' && isHexPubkey(value)) pubkeys.add(value);
  }
  return pubkeys;
}

/** The write relays of a kind 10002: `r` tags without a marker or marked `write`, ws(s) URLs only. */
export function writeRelays(event: NostrEvent): string[] {
  const relays: string[] = [];
  for (const tag of event.tags) {
    const [name, url, marker] = tag;
    if (name !== 'r' || url === undefined || !/^wss?:\/\/[^\s/]+/.test(url)) continue;
    if (marker !== undefined && marker !== 'write') continue;
    if (!relays.includes(url)) relays.push(url);
  }
  return relays;
}

/** The per-relay event cap the query function of a {@link SocialListCache} needs. */
export function socialListQueryCap(): number {
  return MAX_AUTHORS_PER_QUERY * EVENTS_PER_AUTHOR;
}

export class SocialListCache {
  private readonly entries = new Map<string, { lists: SocialLists; expiresAtMs: number; muteItems: number }>();
  /** The sum of `muteItems` over `entries`. */
  private cachedMuteItems = 0;
  private readonly inFlight = new Map<string, Promise<SocialLists>>();
  private readonly clock: Clock;
  private readonly batcher: TurnBatcher<string, SocialLists>;

  constructor(private readonly options: SocialListCacheOptions) {
    this.clock = options.clock ?? systemClock;
    this.batcher = new TurnBatcher((pubkeys) => this.fetchMany(pubkeys), { maxBatch: MAX_AUTHORS_PER_QUERY });
  }

  /** The user's lists, from the cache or the relays. Never rejects. */
  lists(pubkey: string): Promise<SocialLists> {
    if (!isHexPubkey(pubkey)) return Promise.resolve(NO_LISTS);
    const cached = this.entries.get(pubkey);
    if (cached !== undefined) {
      if (cached.expiresAtMs > this.clock.nowMs()) {
        this.count('cache_hit');
        return Promise.resolve(cached.lists);
      }
      this.drop(pubkey);
    }
    const pending = this.inFlight.get(pubkey);
    if (pending !== undefined) return pending;
    const lookup = this.batcher
      .add(pubkey)
      .then((lists) => {
        this.remember(pubkey, lists);
        return lists;
      })
      .catch((error: unknown) => {
        this.count('error');
        this.options.logger.warn({ pubkey, err: error }, 'mute/contact list lookup failed; nobody muted this time');
        return NO_LISTS;
      })
      .finally(() => this.inFlight.delete(pubkey));
    this.inFlight.set(pubkey, lookup);
    return lookup;
  }

  /** Forget a user's lists (tests, and a future live update). */
  forget(pubkey: string): void {
    this.drop(pubkey);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Mute-list items held now, over every cached user. */
  get muteItems(): number {
    return this.cachedMuteItems;
  }

  private remember(pubkey: string, lists: SocialLists): void {
    const { pubkeys, hashtags, words, threads } = lists.mutes;
    const muteItems = pubkeys.size + hashtags.size + words.size + threads.size;
    // Only a list of more muted pubkeys than the whole budget (they are not bounded per list):
    // asked for again each time rather than emptying the cache for it.
    if (muteItems > this.options.maxCachedMuteItems) return;
    this.drop(pubkey);
    while (
      this.entries.size >= this.options.maxEntries ||
      (this.entries.size > 0 && this.cachedMuteItems + muteItems > this.options.maxCachedMuteItems)
    ) {
      // Maps iterate in insertion order: the first key is the one remembered longest ago.
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.drop(oldest);
    }
    this.entries.set(pubkey, { lists, expiresAtMs: this.clock.nowMs() + this.options.ttlMs, muteItems });
    this.cachedMuteItems += muteItems;
    this.options.metrics?.socialListCacheMuteItems.set(this.cachedMuteItems);
  }

  private drop(pubkey: string): void {
    const entry = this.entries.get(pubkey);
    if (entry === undefined) return;
    this.entries.delete(pubkey);
    this.cachedMuteItems -= entry.muteItems;
    this.options.metrics?.socialListCacheMuteItems.set(this.cachedMuteItems);
  }

  private count(outcome: 'cache_hit' | 'found' | 'not_found' | 'outbox' | 'error'): void {
    this.options.metrics?.socialListLookups.inc({ outcome });
  }

  /** The lists of every user in `pubkeys` (distinct), from one query to the main relays and outbox queries where needed. */
  private async fetchMany(pubkeys: string[]): Promise<SocialLists[]> {
    const newest = new Map<string, Map<number, NostrEvent>>(pubkeys.map((p) => [p, new Map()]));
    await this.ask(this.options.relays, pubkeys, [CONTACTS, MUTE_LIST, RELAY_LIST], newest);
    await Promise.all(pubkeys.map((pubkey) => this.askOutbox(pubkey, newest)));
    return pubkeys.map((pubkey) => {
      const found = newest.get(pubkey) ?? new Map<number, NostrEvent>();
      const muteList = found.get(MUTE_LIST);
      const contactList = found.get(CONTACTS);
      this.count(muteList === undefined && contactList === undefined ? 'not_found' : 'found');
      return {
        mutes: muteList === undefined ? EMPTY_MUTE_LIST : this.readMuteList(muteList),
        follows: contactList === undefined ? null : listedPubkeys(contactList),
      };
    });
  }

  /** The bounded mute list of `event`, counting and logging what the bound left out. */
  private readMuteList(event: NostrEvent): MuteList {
    const { list, dropped } = parseMuteList(event, this.options.maxMuteItems);
    const truncated = (Object.keys(dropped) as BoundedMuteItem[]).filter((item) => dropped[item] > 0);
    if (truncated.length > 0) {
      for (const item of truncated) this.options.metrics?.muteListItemsDropped.inc({ item }, dropped[item]);
      // Once per fetch, so at most once per user and `nostr.list_cache_ttl_secs`.
      this.options.logger.info(
        { pubkey: event.pubkey, eventId: event.id, dropped, maxItems: this.options.maxMuteItems },
        'mute list longer than nostr.mute_list_max_items: its oldest items are not honoured',
      );
    }
    return list;
  }

  /** The lists the main relays lacked, from the user's kind 10002 write relays. */
  private async askOutbox(pubkey: string, newest: Map<string, Map<number, NostrEvent>>): Promise<void> {
    const found = newest.get(pubkey);
    const relayList = found?.get(RELAY_LIST);
    const missing = [CONTACTS, MUTE_LIST].filter((kind) => !found?.has(kind));
    if (missing.length === 0 || relayList === undefined) return;
    const outbox = writeRelays(relayList)
      .filter((url) => !this.options.relays.includes(url))
      .slice(0, MAX_OUTBOX_RELAYS);
    if (outbox.length === 0) return;
    this.count('outbox');
    await this.ask(outbox, [pubkey], missing, newest);
  }

  /** Query `relays` for `kinds` of `authors`, keeping the newest verified event of each author and kind in `newest`. */
  private async ask(
    relays: readonly string[],
    authors: string[],
    kinds: number[],
    newest: Map<string, Map<number, NostrEvent>>,
  ): Promise<void> {
    if (relays.length === 0) return;
    const answers = await this.options.queryRelays(relays, { kinds, authors }, this.options.queryTimeoutMs);
    const checked = new Set<string>();
    for (const answer of answers) {
      const event = parseEvent(answer);
      if (isEventRejection(event) || !kinds.includes(event.kind)) continue;
      const found = newest.get(event.pubkey);
      if (found === undefined) continue; // not an author asked for
      const identity = `${event.id}:${event.sig}`;
      if (checked.has(identity) || !isNewerReplaceable(event, found.get(event.kind))) continue;
      checked.add(identity);
      if (this.options.verifier.verify(event)) found.set(event.kind, event);
    }
  }
}
