/**
 * The NIP-9a gateway's watcher (role `gateway`): keeps every stored registration in per-relay
 * match indexes, one {@link RelayWatch} per relay with the registrations' filters merged, and
 * turns each matching event into a durable delivery on the `nip9a` queue, before any callback
 * I/O. It never waits on the store per event: the enqueue runs in the background, and a relay
 * whose pending deliveries reach `max_pending_deliveries_per_relay` has new work dropped and
 * counted instead of slowing the socket down.
 *
 * Registrations change through the relay endpoint and the HTTP route, possibly in another
 * process: the watcher polls the store's change counter and reloads what changed (and reloads at
 * once when told in-process, `changed()`).
 */
import { createHash } from 'node:crypto';
import { isAuthentic, type MaybeOffThreadVerifier, type NostrEvent } from '../../nostr/event.ts';
import type { OutboundPolicy } from '../../net/public-connect.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Clock, EnqueueItem, LeasedItem, StorePort } from '../../store/port.ts';
import type { StoredNip9aRegistration } from '../../store/port-nip9a-gateway.ts';
import { TurnBatcher } from '../../util/turn-batcher.ts';
import { STORE_RETRY_DELAYS_MS } from '../../util/store-retry.ts';
import { parseNip9aRegistration, registrationAddress, type Nip9aRegistration } from '../registration.ts';
import type { GatewaySettings } from './config.ts';
import { MatchIndex } from './match-index.ts';
import type { GatewayMetrics } from './metrics.ts';
import { RelayWatch } from './relay-watch.ts';
import type { LeasedInlet, QueueSignal } from '../../store/queue-work.ts';

/** One queued callback delivery: references plus the event (the gateway keeps no event store). */
export interface Nip9aDelivery {
  pubkey: string;
  d: string;
  /** The registration version that matched. */
  registrationId: string;
  relay: string;
  event: NostrEvent;
  /** When the event was read from the relay (ms, gateway clock). */
  receivedAtMs: number;
}

/** Queue id and outcome key of a delivery: one per (registration address, event). */
export function deliveryKey(pubkey: string, d: string, eventId: string): string {
  return createHash('sha256')
    .update(`${registrationAddress(pubkey, d)}\n${eventId}`)
    .digest('hex');
}

/** A stored registration parsed again under the current policy; null when it no longer passes. */
export function parseStored(stored: StoredNip9aRegistration, settings: GatewaySettings): Nip9aRegistration | null {
  let event: NostrEvent;
  try {
    event = JSON.parse(stored.eventJson) as NostrEvent;
  } catch {
    return null;
  }
  const checked = parseNip9aRegistration(event, { limits: settings.limits, callbackPolicy: settings.policy });
  return checked.ok ? checked.registration : null;
}

interface RelayState {
  index: MatchIndex;
  watch: RelayWatch;
  pending: number;
}

export interface GatewayOptions {
  store: StorePort;
  settings: GatewaySettings;
  /** Checks the matched events; off the main thread through `verifyAsync` when it has it. */
  verifier: MaybeOffThreadVerifier;
  clock: Clock;
  logger: Logger;
  metrics: GatewayMetrics;
  wake: QueueSignal;
  /**
   * Queue each matched delivery already leased (attempt 1 reserved in the same write) and hand it
   * to the delivery worker of this process at once; without it, deliveries are queued ready for
   * the next lease (tests that lease by hand).
   */
  handOff?: { inlet: LeasedInlet<Nip9aDelivery>; leaseMs: number };
  /** The outbound address policy relay sockets are opened under (purpose `nip9a_relay`). */
  relayPolicy: OutboundPolicy;
  /** Builds the watch of a relay (tests and the benchmark may observe it). */
  makeWatch?: (url: string, onEvent: (event: NostrEvent, receivedAtMs: number) => void) => RelayWatch;
}

export class Nip9aGateway {
  private readonly relays = new Map<string, RelayState>();
  /** address → version loaded, to apply only what changed on reload. */
  private readonly loaded = new Map<string, { eventId: string; relays: string[] }>();
  private version = -1;
  private reloading: Promise<void> | null = null;
  private reloadAgain = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  /** With a hand-off: the deliveries matched in one turn, queued leased by one store call. */
  private readonly leasedEnqueues: TurnBatcher<EnqueueItem<Nip9aDelivery>, LeasedItem<Nip9aDelivery> | null> | null;

  constructor(private readonly options: GatewayOptions) {
    const { handOff, store } = options;
    this.leasedEnqueues = handOff ? new TurnBatcher((items) => store.enqueueLeased('nip9a', items, handOff.leaseMs)) : null;
  }

  async start(): Promise<void> {
    this.options.metrics.pendingSources.add(this.pendingDeliveries);
    await this.reload();
    this.schedulePoll();
  }

  stop(): void {
    this.stopped = true;
    this.options.metrics.pendingSources.delete(this.pendingDeliveries);
    if (this.timer !== null) clearTimeout(this.timer);
    for (const state of this.relays.values()) state.watch.stop();
    this.relays.clear();
  }

  /** Registrations changed in this process: reload now instead of at the next poll. */
  changed(): Promise<void> {
    return this.reload(true);
  }

  /** Deliveries queued by this gateway and not settled, over every relay it watches. */
  readonly pendingDeliveries = (): number => {
    let pending = 0;
    for (const state of this.relays.values()) pending += state.pending;
    return pending;
  };

  /** A delivery of `relay` reached a terminal outcome (the pending bound frees one place). */
  settled(relay: string): void {
    const state = this.relays.get(relay);
    if (state && state.pending > 0) state.pending -= 1;
  }

  /** The registration version `eventId` at (pubkey, d) as loaded and parsed, if it is the one loaded. */
  loadedRegistration(pubkey: string, d: string, eventId: string): Nip9aRegistration | undefined {
    const address = registrationAddress(pubkey, d);
    const loaded = this.loaded.get(address);
    if (loaded?.eventId !== eventId) return undefined;
    const relay = loaded.relays[0];
    return relay === undefined ? undefined : this.relays.get(relay)?.index.get(address);
  }

  /** Relays watched and how many registrations each serves. */
  status(): Array<{ relay: string; registrations: number; connected: boolean; pending: number }> {
    return [...this.relays.entries()].map(([relay, s]) => ({
      relay,
      registrations: s.index.size,
      connected: s.watch.connected,
      pending: s.pending,
    }));
  }

  /**
   * Match one event read from `relay` (id and signature not yet checked), check the event when
   * something matched, and queue its deliveries. Exposed for tests and the benchmark.
   */
  onEvent(relay: string, event: NostrEvent, receivedAtMs: number): void {
    const state = this.relays.get(relay);
    if (!state) return;
    const matched = state.index.match(event);
    if (matched.length === 0) return;
    void isAuthentic(this.options.verifier, event).then((authentic) =>
      this.queueAuthentic(relay, state, event, receivedAtMs, matched, authentic),
    );
  }

  private queueAuthentic(
    relay: string,
    state: RelayState,
    event: NostrEvent,
    receivedAtMs: number,
    matched: Nip9aRegistration[],
    authentic: boolean,
  ): void {
    const { metrics, logger } = this.options;
    if (!authentic) {
      metrics.dropped.inc({ reason: 'bad_signature' }, matched.length);
      logger.warn({ relay, eventId: event.id }, 'nip9a gateway: relay sent an event with a bad id or signature');
      return;
    }
    if (this.stopped) return;
    metrics.matched.inc(matched.length);
    for (const registration of matched) {
      if (state.pending >= this.options.settings.maxPendingPerRelay) {
        metrics.dropped.inc({ reason: 'queue_full' });
        continue;
      }
      state.pending += 1;
      const payload: Nip9aDelivery = {
        pubkey: registration.pubkey,
        d: registration.d,
        registrationId: registration.event.id,
        relay,
        event,
        receivedAtMs,
      };
      this.queueDeliveryRetrying({ id: deliveryKey(registration.pubkey, registration.d, event.id), payload }, relay)
        .then((added) => {
          // Already queued (the same event through a resubscription): it holds one place, not two.
          if (!added) this.settled(relay);
        })
        .catch((err: unknown) => {
          this.settled(relay);
          metrics.dropped.inc({ reason: 'store_error' });
          logger.error({ err: (err as Error).message, relay }, 'nip9a gateway: cannot queue a delivery');
        });
    }
  }

  /**
   * {@link queueDelivery}, asked again in place after a store failure ({@link STORE_RETRY_DELAYS_MS}):
   * the matched event is held only here, so giving up at once would drop the delivery. The
   * enqueue is idempotent by the delivery's key, so a retry after an enqueue that was applied but
   * reported failed queues nothing twice (its item waits out the failed attempt's lease).
   */
  private async queueDeliveryRetrying(item: EnqueueItem<Nip9aDelivery>, relay: string): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.queueDelivery(item);
      } catch (err) {
        const delayMs = STORE_RETRY_DELAYS_MS[attempt];
        if (delayMs === undefined || this.stopped) throw err;
        this.options.logger.warn(
          { err: (err as Error).message, relay, attempt: attempt + 1, retryInMs: delayMs },
          'nip9a gateway: the store did not take a delivery; asking again',
        );
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
  }

  /** Persist one delivery before any I/O, and start it (hand-off) or wake the worker; false when already queued. */
  private async queueDelivery(item: EnqueueItem<Nip9aDelivery>): Promise<boolean> {
    const { handOff, store, wake } = this.options;
    if (handOff && this.leasedEnqueues) {
      const leased = await this.leasedEnqueues.add(item);
      if (leased) handOff.inlet.push([leased]);
      return leased !== null;
    }
    const added = await store.enqueue('nip9a', item);
    if (added) wake.notify('nip9a');
    return added;
  }

  private schedulePoll(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.reload().finally(() => this.schedulePoll());
    }, this.options.settings.reloadPollMs);
  }

  private reload(force = false): Promise<void> {
    if (this.reloading) {
      this.reloadAgain ||= force;
      return this.reloading;
    }
    this.reloading = (async () => {
      try {
        for (;;) {
          const forced = force || this.reloadAgain;
          this.reloadAgain = false;
          force = false;
          const version = await this.options.store.nip9aRegistrationsVersion();
          if (forced || version !== this.version) {
            this.version = version;
            this.apply(await this.options.store.listAllNip9aRegistrations());
          }
          if (!this.mustReloadAgain()) break;
        }
      } catch (err) {
        this.options.logger.error({ err: (err as Error).message }, 'nip9a gateway: cannot load registrations');
      } finally {
        this.reloading = null;
      }
    })();
    return this.reloading;
  }

  /** A reload asked for while one ran (not inlined: the flag changes across awaits). */
  private mustReloadAgain(): boolean {
    return this.reloadAgain && !this.stopped;
  }

  private apply(all: StoredNip9aRegistration[]): void {
    if (this.stopped) return;
    const touched = new Set<string>();
    const present = new Set<string>();
    for (const stored of all) {
      const address = registrationAddress(stored.pubkey, stored.d);
      present.add(address);
      const previous = this.loaded.get(address);
      if (previous?.eventId === stored.eventId) continue;
      if (previous) for (const relay of previous.relays) this.drop(relay, address, touched);
      const registration = parseStored(stored, this.options.settings);
      if (!registration) {
        this.loaded.delete(address);
        continue;
      }
      this.loaded.set(address, { eventId: stored.eventId, relays: registration.relays });
      for (const relay of registration.relays) {
        this.stateOf(relay).index.put(address, registration);
        touched.add(relay);
      }
    }
    for (const [address, previous] of this.loaded) {
      if (present.has(address)) continue;
      for (const relay of previous.relays) this.drop(relay, address, touched);
      this.loaded.delete(address);
    }
    for (const relay of touched) {
      const state = this.relays.get(relay);
      if (!state) continue;
      if (state.index.size === 0) {
        state.watch.stop();
        this.relays.delete(relay);
        continue;
      }
      const filters = [...state.index.registrations()].flatMap((r) => r.filters);
      state.watch.setFilters(filters);
    }
    this.options.metrics.watchedRelays.set(this.relays.size);
  }

  private drop(relay: string, address: string, touched: Set<string>): void {
    if (this.relays.get(relay)?.index.remove(address)) touched.add(relay);
  }

  private stateOf(relay: string): RelayState {
    let state = this.relays.get(relay);
    if (state) return state;
    const onEvent = (event: NostrEvent, receivedAtMs: number): void => this.onEvent(relay, event, receivedAtMs);
    const watch =
      this.options.makeWatch?.(relay, onEvent) ??
      new RelayWatch({ url: relay, policy: this.options.relayPolicy, clock: this.options.clock, logger: this.options.logger, onEvent });
    state = { index: new MatchIndex(), watch, pending: 0 };
    this.relays.set(relay, state);
    return state;
  }
}
