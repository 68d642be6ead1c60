/**
 * One watched relay of the NIP-9a gateway: one WebSocket for every registration that names it,
 * carrying their filters merged into few subscriptions, reconnected with the listener's jittered
 * backoff (`listener/backoff.ts`) and parsed with the listener's frame parser
 * (`nostr/relay-frames.ts`). Events are shape-checked and deduplicated per relay before they reach
 * the gateway, which verifies (id and signature) only the ones it matched: most of a busy relay's
 * traffic matches nothing, and a check costs more than the match.
 *
 * Merging: filters of the same shape (every field but the one they are filed under, see
 * `mergeFilters`) become one filter with the union of their values, so thousands of `#p`
 * registrations of one form are one REQ filter (split into chunks of {@link MAX_FILTER_VALUES}),
 * and at most {@link FILTERS_PER_REQ} filters go in one REQ. `since` is the subscription time minus
 * {@link RESUBSCRIBE_OVERLAP_SECS}; each registration's own "no backfill" rule is applied when
 * matching, so the overlap never delivers an event older than a registration.
 *
 * The socket is opened through the outbound address policy (`openPolicyWebSocket`, purpose
 * `nip9a_relay`): a relay name that resolves to a loopback, private or other non-public address
 * gets no connection. Such a refusal is retried like a failed connection (the name's DNS may be
 * fixed), but at the longest backoff ({@link RECONNECT_MAX_BACKOFF_MS}), so a hostile name costs
 * one lookup and one log line a minute, bounded by `nip9a.max_watched_relays`.
 */
import type WebSocket from 'ws';
import type { NostrEvent } from '../../nostr/event.ts';
import { isEventRejection, parseEvent } from '../../nostr/event.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Clock } from '../../store/port.ts';
import { reconnectDelayMs, DEFAULT_BACKOFF_POLICY, RECONNECT_MAX_BACKOFF_MS } from '../../listener/backoff.ts';
import { isOutboundRefusal, openPolicyWebSocket, type OutboundPolicy } from '../../net/public-connect.ts';
import { MAX_RELAY_FRAME_BYTES, frameText, parseRelayFrame } from '../../nostr/relay-frames.ts';
import { SeenIds } from '../../listener/seen-ids.ts';
import { filterToWire, type Nip9aFilter } from '../registration.ts';

/** Values of one field in one merged filter; relays refuse very long filters. */
export const MAX_FILTER_VALUES = 256;
/** Filters per REQ; relays commonly cap this near 10. */
export const FILTERS_PER_REQ = 10;
/** Seconds before the subscription time a (re)subscription starts, against clock skew and gaps. */
export const RESUBSCRIBE_OVERLAP_SECS = 60;
/** Changes of the registration set arriving together are applied as one resubscription. */
export const RESUBSCRIBE_DEBOUNCE_MS = 100;
/** A session that lasted this long resets the backoff. */
const STABLE_SESSION_MS = 30_000;
const SEEN_IDS_PER_RELAY = 20_000;

type FieldName = 'ids' | 'authors' | 'kinds' | `#${string}`;

/** Merge filters of the same shape into few wire filters (see the module comment). */
export function mergeFilters(filters: readonly Nip9aFilter[], since: number): Record<string, unknown>[] {
  const groups = new Map<string, { base: Record<string, unknown>; field: FieldName | null; values: Set<string | number> }>();
  for (const filter of filters) {
    const wire = filterToWire(filter);
    let field: FieldName | null = null;
    if (filter.ids) field = 'ids';
    else if (filter.tags && Object.keys(filter.tags).length > 0) field = `#${Object.keys(filter.tags)[0] as string}`;
    else if (filter.authors) field = 'authors';
    else if (filter.kinds) field = 'kinds';
    const values = field === null ? [] : (wire[field] as Array<string | number>);
    // A filter's own since/until are dropped on the wire (kept when matching), so they do not split shapes.
    const base = Object.fromEntries(Object.entries(wire).filter(([key]) => key !== 'since' && key !== 'until' && key !== field));
    const key = `${field ?? ''}|${JSON.stringify(Object.entries(base).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { base, field, values: new Set() }));
    for (const value of values) group.values.add(value);
  }
  const out: Record<string, unknown>[] = [];
  for (const { base, field, values } of groups.values()) {
    if (field === null) {
      out.push({ ...base, since });
      continue;
    }
    const all = [...values];
    for (let i = 0; i < all.length; i += MAX_FILTER_VALUES) out.push({ ...base, [field]: all.slice(i, i + MAX_FILTER_VALUES), since });
  }
  return out;
}

export interface RelayWatchOptions {
  url: string;
  /** The outbound address policy the socket is opened under (purpose `nip9a_relay`). */
  policy: OutboundPolicy;
  clock: Clock;
  logger: Logger;
  /**
   * Called once per well-formed, not yet seen event, before any signature check (the caller
   * checks what it keeps); must not block (the gateway only matches and enqueues).
   */
  onEvent: (event: NostrEvent, receivedAtMs: number) => void;
  /** Prefix of subscription ids (short). */
  subscriptionPrefix?: string;
}

export class RelayWatch {
  private socket: WebSocket | null = null;
  private open = false;
  private stopped = false;
  private filters: Nip9aFilter[] = [];
  private activeSubscriptions = new Set<string>();
  private resubscribeTimer: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  private openedAtMs = 0;
  private readonly seen = new SeenIds(SEEN_IDS_PER_RELAY);
  private readonly subscriptionPrefix: string;
  /** Events received, for /health-like reporting and the benchmark. */
  received = 0;

  constructor(private readonly options: RelayWatchOptions) {
    this.subscriptionPrefix = options.subscriptionPrefix ?? 'nip9a';
  }

  get url(): string {
    return this.options.url;
  }

  get connected(): boolean {
    return this.open;
  }

  /** Replace the filters watched (the union of every registration's filters for this relay). */
  setFilters(filters: Nip9aFilter[]): void {
    this.filters = filters;
    if (this.stopped) return;
    if (this.socket === null) {
      // Between connections the pending reconnect subscribes with these filters.
      if (this.reconnectTimer === null) this.connect();
      return;
    }
    if (this.resubscribeTimer !== null || !this.open) return;
    this.resubscribeTimer = setTimeout(() => {
      this.resubscribeTimer = null;
      this.subscribe();
    }, RESUBSCRIBE_DEBOUNCE_MS);
  }

  stop(): void {
    this.stopped = true;
    if (this.resubscribeTimer !== null) clearTimeout(this.resubscribeTimer);
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer);
    this.socket?.terminate();
    this.socket = null;
    this.open = false;
  }

  private connect(): void {
    const { url, logger } = this.options;
    let socket: WebSocket;
    try {
      socket = openPolicyWebSocket(url, this.options.policy, { maxPayload: MAX_RELAY_FRAME_BYTES, handshakeTimeout: 10_000 });
    } catch (error) {
      // A refused IP literal (reported by the policy) or a URL `ws` cannot open.
      if (!isOutboundRefusal(error))
        logger.warn({ relay: url, err: (error as Error).message }, 'nip9a gateway cannot open the relay socket');
      this.scheduleReconnect(RECONNECT_MAX_BACKOFF_MS);
      return;
    }
    let refused = false;
    this.socket = socket;
    socket.on('open', () => {
      this.open = true;
      this.openedAtMs = this.options.clock.nowMs();
      logger.info({ relay: url }, 'nip9a gateway connected to relay');
      this.subscribe();
    });
    socket.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      if (!isBinary) this.receive(frameText(data));
    });
    socket.on('error', (error) => {
      // The policy has logged and counted a refusal already.
      if (isOutboundRefusal(error)) refused = true;
      else logger.warn({ relay: url, err: error.message }, 'nip9a gateway relay socket error');
    });
    socket.on('close', () => {
      const wasOpen = this.open;
      this.open = false;
      this.socket = null;
      this.activeSubscriptions.clear();
      if (this.stopped) return;
      if (wasOpen && this.options.clock.nowMs() - this.openedAtMs >= STABLE_SESSION_MS) this.failures = 0;
      this.scheduleReconnect(refused ? RECONNECT_MAX_BACKOFF_MS : reconnectDelayMs(this.failures, DEFAULT_BACKOFF_POLICY));
    });
  }

  private scheduleReconnect(delayMs: number): void {
    if (this.stopped) return;
    this.failures += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (!this.stopped) this.connect();
    }, delayMs);
  }

  private subscribe(): void {
    const socket = this.socket;
    if (!socket || !this.open) return;
    const since = Math.floor(this.options.clock.nowMs() / 1000) - RESUBSCRIBE_OVERLAP_SECS;
    const wire = mergeFilters(this.filters, since);
    const wanted = new Set<string>();
    for (let i = 0; i < wire.length; i += FILTERS_PER_REQ) {
      const id = `${this.subscriptionPrefix}-${i / FILTERS_PER_REQ}`;
      wanted.add(id);
      socket.send(JSON.stringify(['REQ', id, ...wire.slice(i, i + FILTERS_PER_REQ)]));
    }
    for (const id of this.activeSubscriptions) if (!wanted.has(id)) socket.send(JSON.stringify(['CLOSE', id]));
    this.activeSubscriptions = wanted;
  }

  private receive(text: string): void {
    const frame = parseRelayFrame(text);
    if (frame.type === 'EVENT') {
      const receivedAtMs = this.options.clock.nowMs();
      const event = parseEvent(frame.event);
      if (isEventRejection(event)) return;
      if (this.seen.has(event.id)) return;
      // Seen before it is verified: a relay that sends a forged copy of an event loses its own
      // genuine copy of it, nothing more (the set is per relay).
      this.seen.add(event.id);
      this.received += 1;
      this.options.onEvent(event, receivedAtMs);
    } else if (frame.type === 'CLOSED') {
      this.options.logger.warn(
        { relay: this.options.url, subscription: frame.subscriptionId, reason: frame.reason },
        'nip9a gateway: relay closed a subscription',
      );
      this.activeSubscriptions.delete(frame.subscriptionId);
    } else if (frame.type === 'NOTICE') {
      this.options.logger.info({ relay: this.options.url, notice: frame.message }, 'nip9a gateway: relay notice');
    }
  }
}
