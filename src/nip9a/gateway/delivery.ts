/**
 * One attempt of a NIP-9a callback delivery (a leased item of the `nip9a` queue). The lease that
 * handed the item out already counted the attempt durably, so a crash during the request also
 * uses one (seed 003: "Attempts are reserved durably before HTTP starts").
 *
 * Before the request: the delivery is dropped when it is older than `pending_expiry_secs`, when a
 * terminal outcome of it is recorded (deduplication), when its registration no longer exists or
 * no longer wants the event (replaced with other filters, deleted by kind 5 or a 404), or when its
 * callback is no longer allowed (allowlist changed).
 *
 * The request: `POST` of `{id, relay, event?}` as JSON, no credentials or cookies, redirects never
 * followed (a 3xx ends the delivery), `request_timeout_secs` from connect to response headers, the
 * response body never read, and only to a public address (`callback-post.ts`; a refused address
 * ends the delivery as `address_refused`, counted in `push_outbound_refused_total`).
 * 2xx delivers; 404 deletes the registration (only that version); 429, 5xx, timeouts and network
 * errors retry after `retry_delays_secs` until `max_attempts`; any other status ends the delivery.
 * Every terminal outcome is recorded before the item is acknowledged.
 */
import type { OutboundRefusal } from '../../net/public-connect.ts';
import type { Logger } from '../../observability/logger.ts';
import type { LeasedItem, StorePort } from '../../store/port.ts';
import type { Nip9aDeliveryRef } from '../../store/port-nip9a-gateway.ts';
import { TurnBatcher } from '../../util/turn-batcher.ts';
import { registrationWants, type Nip9aRegistration } from '../registration.ts';
import { checkCallbackUrl } from '../ssrf.ts';
import type { AttemptResult, CallbackPoster } from './callback-post.ts';
import type { GatewaySettings } from './config.ts';
import { deliveryKey, parseStored, type Nip9aDelivery } from './gateway.ts';
import type { GatewayMetrics } from './metrics.ts';
import { DONE, type WorkOutcome } from '../../store/queue-work.ts';

/** Redacted form of a callback URL for logs: origin and the first characters of the path. */
export function redactCallback(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname.slice(0, 6)}…`;
  } catch {
    return '(unparseable)';
  }
}

export interface DeliveryDeps {
  store: StorePort;
  settings: GatewaySettings;
  metrics: GatewayMetrics;
  logger: Logger;
  /** The POST of an attempt (`createCallbackPoster`'s, or a test's). */
  post: CallbackPoster;
  /**
   * Told of an attempt the outbound address policy refused (the POST may have run on a POST
   * thread): `outboundRefusalReporter`'s metric and log line.
   */
  reportRefusal: (refusal: OutboundRefusal) => void;
  /** Told when a delivery of a relay ends (the gateway's pending bound). */
  onSettled?: (relay: string) => void;
  /**
   * The registration version `eventId` at (pubkey, d) already parsed under the current policy,
   * when the caller holds it (the gateway's match index); parsed from the store otherwise.
   */
  knownRegistration?: (pubkey: string, d: string, eventId: string) => Nip9aRegistration | undefined;
}

/** The registration versions parsed lately, by event id (parsing per attempt would dominate under load). */
class ParsedRegistrations {
  private readonly cache = new Map<string, Nip9aRegistration | null>();
  constructor(private readonly capacity = 4096) {}
  get(eventId: string, parse: () => Nip9aRegistration | null): Nip9aRegistration | null {
    const known = this.cache.get(eventId);
    if (known !== undefined) return known;
    const parsed = parse();
    if (this.cache.size >= this.capacity) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(eventId, parsed);
    return parsed;
  }
}

function resultLabel(result: AttemptResult): string {
  if (result.kind !== 'status') return result.kind;
  const s = result.status;
  if (s >= 200 && s < 300) return '2xx';
  if (s === 404 || s === 429) return String(s);
  return `${Math.floor(s / 100)}xx`;
}

/** The queue handler of the `nip9a` queue. */
export function nip9aDeliveryHandler(deps: DeliveryDeps): (item: LeasedItem<Nip9aDelivery>) => Promise<WorkOutcome> {
  const { store, settings, metrics, logger } = deps;
  const { post } = deps;
  const parsed = new ParsedRegistrations();
  // The attempts running side by side read their state and record their outcomes in one store
  // call per turn (bench/nip9a: three calls per delivery were a third of the gateway's thread).
  const states = new TurnBatcher((refs: Nip9aDeliveryRef[]) => store.readNip9aDeliveryStates(refs, settings.outcomeMaxAgeMs));
  const outcomes = new TurnBatcher((keys: string[]) => store.recordNip9aOutcomes(keys, settings.outcomeEntries, settings.outcomeMaxAgeMs));
  /**
   * The registration in force at (pubkey, d), version `eventId` as just read: the caller's parsed
   * copy when it holds that version, else read again (the newest, should it have changed since)
   * and parsed. Null when it is gone or no longer passes the policy.
   */
  const registrationOf = async (pubkey: string, d: string, eventId: string): Promise<Nip9aRegistration | null> => {
    const known = deps.knownRegistration?.(pubkey, d, eventId);
    if (known) return known;
    const stored = await store.getNip9aRegistration(pubkey, d);
    return stored ? parsed.get(stored.eventId, () => parseStored(stored, settings)) : null;
  };

  return async (item) => {
    const delivery = item.payload;
    const key = deliveryKey(delivery.pubkey, delivery.d, delivery.event.id);
    const finish = async (outcome: string): Promise<WorkOutcome> => {
      await outcomes.add(key);
      metrics.outcomes.inc({ outcome });
      deps.onSettled?.(delivery.relay);
      return DONE;
    };
    if (store.clock.nowMs() - delivery.receivedAtMs > settings.pendingExpiryMs) return finish('expired');
    const state = await states.add({ key, pubkey: delivery.pubkey, d: delivery.d });
    if (state.outcomeRecorded) {
      deps.onSettled?.(delivery.relay);
      return DONE;
    }
    if (state.registrationEventId === null) return finish('registration_gone');
    const registration = await registrationOf(delivery.pubkey, delivery.d, state.registrationEventId);
    if (!registration || !registration.relays.includes(delivery.relay) || !registrationWants(registration, delivery.event))
      return finish('no_longer_matches');
    const allowed = checkCallbackUrl(registration.callback, settings.policy);
    if (!allowed.ok) return finish('blocked');

    const body = JSON.stringify(
      registration.includeEvent
        ? { id: delivery.event.id, relay: delivery.relay, event: delivery.event }
        : { id: delivery.event.id, relay: delivery.relay },
    );
    const result = await post(registration.callback, body, settings.requestTimeoutMs);
    metrics.attempts.inc({ result: resultLabel(result) });
    if (result.kind === 'refused') {
      // Not retried: the allowlisted name resolves to a non-public address (see callback-post.ts).
      deps.reportRefusal(result.refusal);
      return finish('address_refused');
    }
    const log = { callback: redactCallback(registration.callback), eventId: delivery.event.id, attempt: item.attempts };
    if (result.kind === 'status' && result.status >= 200 && result.status < 300) {
      metrics.arrivalToCallback.observe(Math.max(0, store.clock.nowMs() - delivery.receivedAtMs) / 1000);
      return finish('delivered');
    }
    if (result.kind === 'status' && result.status === 404) {
      await store.deleteNip9aRegistration(registration.pubkey, registration.d, registration.event.id);
      logger.info(log, 'nip9a callback answered 404: registration deleted');
      return finish('registration_deleted');
    }
    const retryable = result.kind !== 'status' || result.status === 429 || result.status >= 500;
    if (!retryable) {
      logger.warn({ ...log, status: result.status }, 'nip9a callback refused the delivery; not retried');
      return finish(result.status >= 300 && result.status < 400 ? 'redirect_refused' : 'refused');
    }
    if (item.attempts >= settings.maxAttempts) {
      logger.warn({ ...log, result: resultLabel(result) }, 'nip9a callback failed its last attempt');
      return finish('failed');
    }
    const delays = settings.retryDelaysMs;
    const afterMs = delays[Math.min(item.attempts - 1, delays.length - 1)] ?? 30_000;
    return { kind: 'retry', afterMs, error: resultLabel(result) };
  };
}
