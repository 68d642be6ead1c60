/**
 * Builds a listener for relay tests with short windows, and publishes like an app does
 * (nostr-tools `Relay` over `ws`).
 */
import WebSocket from 'ws';
import type { Counter } from 'prom-client';
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay';
import { createEventVerifier, type NostrEvent } from '../../src/nostr/event.ts';
import { generateSecretKey, publicKeyOf, signEvent } from '../../src/nostr/keys.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { createListener, type Listener, type ListenerOptions, type ListenerTuning } from '../../src/listener/listener.ts';
import { MemoryCursorStore, RecordingSink, silentLogger } from './fakes.ts';

useWebSocketImplementation(WebSocket);

/** Windows short enough that no test waits long, long enough that a loaded CI box keeps up. */
export const TEST_TUNING: ListenerTuning = {
  reconnectInitialBackoffMs: 20,
  reconnectMaxBackoffMs: 200,
  historyPageTimeoutMs: 2_000,
  closedRecoveryGraceMs: 100,
  rateLimitBackoffMs: 100,
  cursorFlushIntervalMs: 50,
  connectTimeoutMs: 2_000,
};

export interface TestListener {
  listener: Listener;
  sink: RecordingSink;
  store: MemoryCursorStore;
  metrics: Metrics;
  servicePubkey: string;
  serviceSecret: string;
}

export const serviceSecret = generateSecretKey();
export const servicePubkey = publicKeyOf(serviceSecret);

export async function startListener(
  relays: string[],
  overrides: Partial<Omit<ListenerOptions, 'relays'>> & { store?: MemoryCursorStore } = {},
): Promise<TestListener> {
  const sink = new RecordingSink();
  const store = overrides.store ?? new MemoryCursorStore();
  const metrics = overrides.metrics ?? new Metrics();
  const listener = createListener({
    relays,
    servicePubkey,
    serviceSecretKeyHex: serviceSecret,
    liveKinds: [1, 7, 1111],
    eventSilenceTimeoutSecs: 30,
    verifier: await createEventVerifier(),
    logger: silentLogger(),
    sink: sink.sink,
    ...overrides,
    store,
    metrics,
    tuning: { ...TEST_TUNING, ...overrides.tuning },
  });
  await listener.start();
  return { listener, sink, store, metrics, servicePubkey, serviceSecret };
}

export function nowSecs(): number {
  return Math.floor(Date.now() / 1000);
}

export function note(secret: string, content: string, createdAt = nowSecs(), kind = 1, tags: string[][] = []): NostrEvent {
  return signEvent({ kind, created_at: createdAt, tags, content }, secret);
}

/** Publishes events to a relay with a nostr-tools client and waits for every OK. */
export async function publish(url: string, ...events: NostrEvent[]): Promise<void> {
  const relay = await Relay.connect(url);
  try {
    for (const event of events) await relay.publish(event);
  } finally {
    relay.close();
  }
}

/** The value of a counter for the given labels (0 when never incremented). */
export async function counterValue(metric: Counter, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await metric.get();
  return values.filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want)).reduce((sum, v) => sum + v.value, 0);
}
