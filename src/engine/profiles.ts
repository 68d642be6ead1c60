/**
 * Sender display names (reference §7.1, `get_display_name`): the store's profile cache first,
 * then a one-shot kind-0 query to the profile relays and the main relays.
 *
 * Differences from divine, on purpose:
 * - the NEWEST verified kind 0 wins (divine keeps whichever it parsed last);
 * - every kind 0 is signature-checked before its name is believed;
 * - an empty or whitespace-only name counts as no name, control characters and runs of
 *   whitespace are folded to one space, and a name is cut to {@link MAX_DISPLAY_NAME_CHARS}, so a
 *   hostile profile cannot blow up a push title or body (FCM caps a message at 4 KiB).
 */
import type { NostrConfig } from '../config/defaults.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { isEventRejection, parseEvent, type EventVerifier, type NostrEvent } from '../nostr/event.ts';
import { METADATA } from '../nostr/kinds.ts';
import { shortNpub } from '../nostr/nip19.ts';
import { isHexPubkey } from '../nostr/tags.ts';
import type { CachedProfile, Clock, StorePort } from '../store/port.ts';
import { systemClock } from '../util/clock.ts';
import { createRelayQuery, type RelayQueryFunction } from './relay-query.ts';
import type { RelaySocketConstructor } from '../nostr/relay-socket.ts';

/** Default bound of one profile lookup's relay query (divine's 5 s; `nostr.query_timeout_secs`). */
export const DEFAULT_PROFILE_QUERY_TIMEOUT_MS = 5_000;

/** Largest kind-0 content parsed (UTF-16 units). Real profiles are well under 4 KiB. */
export const MAX_PROFILE_CONTENT_CHARS = 64 * 1024;

/** Longest name kept from a profile, in code points. */
export const MAX_DISPLAY_NAME_CHARS = 64;

/**
 * How long this process remembers a name it found (ms). The store's cache (`profile_cache_ttl_secs`)
 * is the shared one; this memo only spares a store round trip per event for senders who are
 * active right now, so a renamed user shows the new name within a minute.
 */
export const RECENT_NAME_TTL_MS = 60_000;
/** Names remembered at once; the oldest are forgotten first. */
export const RECENT_NAME_ENTRIES = 10_000;

/** Outcome label of `push_profile_lookups_total`. */
export type ProfileLookupOutcome = 'cache_hit' | 'found' | 'not_found' | 'unusable' | 'error';

/**
 * Display names of Nostr users.
 *
 * Contract: `displayName` resolves with display_name, else name, else null (no profile, no name
 * in it, or the lookup failed or timed out). It never rejects: a failure is a null and a log
 * line, because a missing name only ever degrades a push to the short-npub fallback.
 */
export interface ProfileResolver {
  displayName(pubkey: string): Promise<string | null>;
}

/** The sender name a push shows: the display name, else `npub1xxxxxxx...` (or "unknown"). */
export async function senderNameOrFallback(resolver: ProfileResolver, pubkey: string): Promise<string> {
  try {
    return (await resolver.displayName(pubkey)) ?? shortNpub(pubkey);
  } catch {
    return shortNpub(pubkey);
  }
}

export interface RelayProfileResolverOptions {
  store: Pick<StorePort, 'getCachedProfile' | 'cacheProfile'>;
  verifier: EventVerifier;
  /** Relays asked for profiles (`nostr.profile_relays`). */
  profileRelays: readonly string[];
  /** The main relays (`nostr.relays`), asked too, as a fallback for users the profile relays lack. */
  mainRelays: readonly string[];
  /** `nostr.profile_cache_ttl_secs`. */
  cacheTtlSecs: number;
  /** Bound of one relay query; {@link DEFAULT_PROFILE_QUERY_TIMEOUT_MS} by default. */
  queryTimeoutMs?: number;
  /** The relay query; a one-shot `ws` query by default. */
  queryRelays?: RelayQueryFunction;
  /** WebSocket class for the default relay query. */
  WebSocketImpl?: RelaySocketConstructor;
  logger: Logger;
  metrics?: Metrics;
  /** Time for the recent-name memo; the process clock by default. */
  clock?: Clock;
}

/** What a kind-0 profile says about names, after sanitising. */
interface ProfileNames {
  name?: string;
  display_name?: string;
}

function sanitiseName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const folded = value.replace(/[\p{Cc}\s]+/gu, ' ').trim();
  if (folded === '') return undefined;
  const chars = Array.from(folded);
  return chars.length <= MAX_DISPLAY_NAME_CHARS ? folded : chars.slice(0, MAX_DISPLAY_NAME_CHARS).join('').trimEnd();
}

/** The names in a kind-0 content, or null when the content is not a JSON object (or too big). */
export function parseProfileContent(content: string): ProfileNames | null {
  if (content.length > MAX_PROFILE_CONTENT_CHARS) return null;
  let document: unknown;
  try {
    document = JSON.parse(content);
  } catch {
    return null;
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return null;
  const record = document as Record<string, unknown>;
  const names: ProfileNames = {};
  const name = sanitiseName(record.name);
  const displayName = sanitiseName(record.display_name);
  if (name !== undefined) names.name = name;
  if (displayName !== undefined) names.display_name = displayName;
  return names;
}

function preferredName(profile: ProfileNames): string | null {
  // The cache may hold values written by divine, which did not sanitise.
  return sanitiseName(profile.display_name) ?? sanitiseName(profile.name) ?? null;
}

/** NIP-01 replaceable order: the higher created_at wins, a tie goes to the lower id. */
function isNewer(candidate: NostrEvent, current: NostrEvent | null): boolean {
  if (current === null) return true;
  if (candidate.created_at !== current.created_at) return candidate.created_at > current.created_at;
  return candidate.id < current.id;
}

/**
 * {@link ProfileResolver} over the store's profile cache and one-shot relay queries. Concurrent
 * lookups of one pubkey share a single cache read and relay query.
 */
export class RelayProfileResolver implements ProfileResolver {
  private readonly inFlight = new Map<string, Promise<string | null>>();
  /** Names found lately (never misses: a profile created a moment ago must show up). */
  private readonly recent = new Map<string, { name: string; expiresAtMs: number }>();
  private readonly clock: Clock;
  private readonly relays: string[];
  private readonly queryTimeoutMs: number;
  private readonly queryRelays: RelayQueryFunction;

  constructor(private readonly options: RelayProfileResolverOptions) {
    this.relays = [...new Set([...options.profileRelays, ...options.mainRelays])];
    this.queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_PROFILE_QUERY_TIMEOUT_MS;
    this.queryRelays = options.queryRelays ?? createRelayQuery({ WebSocketImpl: options.WebSocketImpl, logger: options.logger });
    this.clock = options.clock ?? systemClock;
  }

  displayName(pubkey: string): Promise<string | null> {
    if (!isHexPubkey(pubkey)) return Promise.resolve(null);
    const remembered = this.recent.get(pubkey);
    if (remembered !== undefined) {
      if (remembered.expiresAtMs > this.clock.nowMs()) {
        this.count('cache_hit');
        return Promise.resolve(remembered.name);
      }
      this.recent.delete(pubkey);
    }
    const pending = this.inFlight.get(pubkey);
    if (pending !== undefined) return pending;
    const lookup = this.lookup(pubkey)
      .then((name) => {
        if (name !== null) this.remember(pubkey, name);
        return name;
      })
      .finally(() => this.inFlight.delete(pubkey));
    this.inFlight.set(pubkey, lookup);
    return lookup;
  }

  private remember(pubkey: string, name: string): void {
    if (this.recent.size >= RECENT_NAME_ENTRIES) {
      // Maps iterate in insertion order: the first key is the one remembered longest ago.
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
    this.recent.set(pubkey, { name, expiresAtMs: this.clock.nowMs() + RECENT_NAME_TTL_MS });
  }

  /** {@link senderNameOrFallback} with this resolver. */
  senderNameOrFallback(pubkey: string): Promise<string> {
    return senderNameOrFallback(this, pubkey);
  }

  private count(outcome: ProfileLookupOutcome): void {
    this.options.metrics?.profileLookups.inc({ outcome });
  }

  private async lookup(pubkey: string): Promise<string | null> {
    try {
      const cached = await this.readCache(pubkey);
      if (cached !== null) {
        this.count('cache_hit');
        return preferredName(cached);
      }
      const newest = await this.newestProfileEvent(pubkey);
      if (newest === null) {
        this.count('not_found');
        return null;
      }
      const names = parseProfileContent(newest.content);
      if (names === null) {
        this.count('unusable');
        this.options.logger.debug({ pubkey, eventId: newest.id }, 'kind 0 content is not a JSON object; no name');
        return null;
      }
      this.count('found');
      await this.writeCache({ pubkey, ...names });
      return preferredName(names);
    } catch (error) {
      this.count('error');
      this.options.logger.warn({ pubkey, err: error }, 'profile lookup failed; the sender name falls back to the npub');
      return null;
    }
  }

  private async readCache(pubkey: string): Promise<CachedProfile | null> {
    try {
      return await this.options.store.getCachedProfile(pubkey);
    } catch (error) {
      this.options.logger.warn({ pubkey, err: error }, 'profile cache read failed; asking the relays');
      return null;
    }
  }

  private async writeCache(profile: CachedProfile): Promise<void> {
    try {
      await this.options.store.cacheProfile(profile, this.options.cacheTtlSecs);
    } catch (error) {
      this.options.logger.warn({ pubkey: profile.pubkey, err: error }, 'profile cache write failed');
    }
  }

  /** The newest authentic kind 0 of `pubkey` any relay returned, or null. */
  private async newestProfileEvent(pubkey: string): Promise<NostrEvent | null> {
    if (this.relays.length === 0) return null;
    const answers = await this.queryRelays(this.relays, { kinds: [METADATA], authors: [pubkey], limit: 1 }, this.queryTimeoutMs);
    let newest: NostrEvent | null = null;
    const checked = new Set<string>();
    for (const answer of answers) {
      const event = parseEvent(answer);
      if (isEventRejection(event) || event.kind !== METADATA || event.pubkey !== pubkey) continue;
      // Several relays usually return the same event: verify it once. Keyed with the signature
      // too, so a copy with a broken signature cannot shadow the genuine one.
      const identity = `${event.id}:${event.sig}`;
      if (checked.has(identity) || !isNewer(event, newest)) continue;
      checked.add(identity);
      if (this.options.verifier.verify(event)) newest = event;
    }
    return newest;
  }
}

/** The resolver the service runs, from `nostr.*` configuration. */
export function createProfileResolver(
  config: Pick<NostrConfig, 'profile_relays' | 'relays' | 'profile_cache_ttl_secs' | 'query_timeout_secs'>,
  deps: Pick<RelayProfileResolverOptions, 'store' | 'verifier' | 'logger' | 'metrics' | 'WebSocketImpl' | 'queryRelays' | 'clock'>,
): RelayProfileResolver {
  return new RelayProfileResolver({
    ...deps,
    profileRelays: config.profile_relays,
    mainRelays: config.relays,
    cacheTtlSecs: config.profile_cache_ttl_secs,
    queryTimeoutMs: config.query_timeout_secs * 1000,
  });
}
