/**
 * What `/health` calls a problem, beyond divine's task flags (issue 38): no relay connected for
 * `health.relay_grace_secs`, a transport whose every send failed for
 * `health.transport_failing_secs`, a store that does not answer. A problem the process can serve
 * through (a relay, a provider) makes it `degraded`; one it cannot (a dead critical task, the
 * store) makes it `failing`.
 *
 * Time is the injected clock's, so tests move it instead of waiting.
 */
import { unwrapTransport } from '../delivery/encrypted-payload.ts';
import { FcmTransport } from '../delivery/fcm/sender.ts';
import { ApnsTransport } from '../delivery/apns/sender.ts';
import { WebPushTransport } from '../delivery/webpush/transport.ts';
import type { DeliveryErrorKind, PushTransport, SendOutcome } from '../delivery/types.ts';
import type { RelayStatus } from '../listener/types.ts';

/** A problem `/health` reports: a stable code, a sentence, and its severity. */
export interface HealthProblem {
  code: 'critical_flag_down' | 'store_unreachable' | 'no_relay' | 'transport_failing' | 'queue_stalled';
  severity: 'degraded' | 'failing';
  message: string;
}

/**
 * Failures that say something about the transport (its credentials, the provider, the network),
 * not about one device or one message: a device gone or a message refused says nothing of the rest.
 */
const TRANSPORT_FAILURE_KINDS: ReadonlySet<DeliveryErrorKind> = new Set([
  'retryable_internal',
  'unauthorized',
  'internal_request',
  'internal_response',
  'initialization',
  'unknown',
]);

interface SendRecord {
  lastSuccessAtMs: number | null;
  /** The first failure since the last success; null while the last outcome was a success. */
  failingSinceMs: number | null;
}

/** Per transport: when it last succeeded and since when it has only failed. */
export class SendHealth {
  private readonly records = new Map<string, SendRecord>();

  constructor(private readonly nowMs: () => number) {}

  /** Record one batch's outcomes of transport `name`. */
  record(name: string, outcomes: Iterable<SendOutcome>): void {
    let record = this.records.get(name);
    for (const outcome of outcomes) {
      if (outcome.ok) {
        record ??= { lastSuccessAtMs: null, failingSinceMs: null };
        record.lastSuccessAtMs = this.nowMs();
        record.failingSinceMs = null;
      } else if (TRANSPORT_FAILURE_KINDS.has(outcome.error.kind)) {
        record ??= { lastSuccessAtMs: null, failingSinceMs: null };
        record.failingSinceMs ??= this.nowMs();
      }
    }
    if (record) this.records.set(name, record);
  }

  /** Transports that failed every send for at least `forMs`, with since when. */
  failing(forMs: number): Array<{ name: string; sinceMs: number; lastSuccessAtMs: number | null }> {
    const now = this.nowMs();
    const out: Array<{ name: string; sinceMs: number; lastSuccessAtMs: number | null }> = [];
    for (const [name, record] of this.records) {
      if (record.failingSinceMs !== null && now - record.failingSinceMs >= forMs)
        out.push({ name, sinceMs: record.failingSinceMs, lastSuccessAtMs: record.lastSuccessAtMs });
    }
    return out;
  }
}

/** The name a transport has in health problems and the start-up summary. */
export function transportName(transport: PushTransport): string {
  const inner = unwrapTransport(transport);
  if (inner instanceof FcmTransport) return 'fcm';
  if (inner instanceof ApnsTransport) return 'apns';
  if (inner instanceof WebPushTransport) return 'webpush';
  return 'other';
}

/** `transport`, with every batch's outcomes recorded in `health` (a wrapper like payload encryption's). */
export function withSendHealth(transport: PushTransport, health: SendHealth): PushTransport & { readonly inner: PushTransport } {
  const name = transportName(transport);
  return {
    inner: transport,
    handles: (device) => transport.handles(device),
    async sendBatch(devices, message, signal) {
      const outcomes = await transport.sendBatch(devices, message, signal);
      health.record(name, outcomes.values());
      return outcomes;
    },
    close: () => transport.close(),
  };
}

/** How often the relays are looked at between `/health` requests: "none connected since" is at most this late. */
export const HEALTH_RELAY_OBSERVE_INTERVAL_MS = 1_000;

/** Why `/ready` answers 503, or null: before the start completed, while stopping, or when the store does not answer. */
export async function notReadyReason(state: { serving: boolean; stopping: boolean; ping: () => Promise<void> }): Promise<string | null> {
  if (state.stopping) return 'stopping';
  if (!state.serving) return 'starting';
  try {
    await withTimeout(state.ping(), HEALTH_STORE_PING_TIMEOUT_MS);
    return null;
  } catch (err) {
    return `the store does not answer: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** `promise`, or a rejection after `ms`. */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long a store ping may take before `/health` calls the store unreachable. */
export const HEALTH_STORE_PING_TIMEOUT_MS = 2_000;

export interface HealthMonitorOptions {
  nowMs: () => number;
  relayGraceMs: number;
  transportFailingMs: number;
  /** The listener's relays; empty in a process without the listener role (no relay problem then). */
  relays: () => RelayStatus[];
  sends: SendHealth;
  /** Resolves when the store answers. */
  ping: () => Promise<void>;
  queueAgeMs: number;
  /** Since when each queue's oldest due item has waited (`StorePort.oldestDueAtMs`), null for none. */
  oldestDue: () => Promise<Array<{ queue: string; dueAtMs: number | null }>>;
}

/**
 * The problems of this process now. Relays are watched as they are looked at: {@link observe}
 * is called on every look and on a timer, so "none connected since" is at most a tick late.
 */
export class HealthMonitor {
  private lastRelayConnectedAtMs: number;

  constructor(private readonly options: HealthMonitorOptions) {
    // The grace counts from the start: a listener gets the whole grace to connect the first time.
    this.lastRelayConnectedAtMs = options.nowMs();
  }

  /** Look at the relays now. */
  observe(): void {
    if (this.options.relays().some((relay) => relay.connected)) this.lastRelayConnectedAtMs = this.options.nowMs();
  }

  async problems(): Promise<HealthProblem[]> {
    this.observe();
    const { nowMs, relayGraceMs, transportFailingMs } = this.options;
    const problems: HealthProblem[] = [];
    const storeProblem = await this.pingStore();
    if (storeProblem) problems.push({ code: 'store_unreachable', severity: 'failing', message: storeProblem });
    else problems.push(...(await this.stalledQueues()));
    const relays = this.options.relays();
    const silentMs = nowMs() - this.lastRelayConnectedAtMs;
    if (relays.length > 0 && !relays.some((relay) => relay.connected) && silentMs >= relayGraceMs) {
      const why = relays.map((relay) => `${relay.url}${relay.lastError ? ` (${relay.lastError})` : ''}`).join(', ');
      problems.push({
        code: 'no_relay',
        severity: 'degraded',
        message: `no relay connected for ${Math.floor(silentMs / 1000)} s: ${why}`,
      });
    }
    for (const failing of this.options.sends.failing(transportFailingMs)) {
      problems.push({
        code: 'transport_failing',
        severity: 'degraded',
        message: `${failing.name}: every send failed for ${Math.floor((nowMs() - failing.sinceMs) / 1000)} s`,
      });
    }
    return problems;
  }

  private async stalledQueues(): Promise<HealthProblem[]> {
    const now = this.options.nowMs();
    const problems: HealthProblem[] = [];
    for (const { queue, dueAtMs } of await this.options.oldestDue()) {
      if (dueAtMs === null || now - dueAtMs < this.options.queueAgeMs) continue;
      problems.push({
        code: 'queue_stalled',
        severity: 'degraded',
        message: `queue ${queue}: the oldest due item has waited ${Math.floor((now - dueAtMs) / 1000)} s`,
      });
    }
    return problems;
  }

  private async pingStore(): Promise<string | null> {
    try {
      await withTimeout(this.options.ping(), HEALTH_STORE_PING_TIMEOUT_MS);
      return null;
    } catch (err) {
      return `the store does not answer: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
}
