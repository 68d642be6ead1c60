/**
 * bench/social: pre-signed likes and comments for registered users, driven through the whole
 * pipeline (validate + verify + inbound queue → engine gates and claims → outbound queue →
 * delivery → FCM over HTTP/2) into the FCM fake (in its own process, 20 ms answer latency).
 * Prints events/s, pushes/s, p50/p99 from event arrival to the FCM request, and a verdict:
 * every expected (event, token) pushed exactly once.
 *
 *   node --import tsx bench/social/run.ts [--users 10000] [--events 10000] [--rate 2000] [--store sqlite|redis|both] [--latency 20]
 *   --rate 0 offers everything at once (peak throughput).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/wasm';
import { createWasmVerifier, isEventRejection, parseEvent } from '../../src/nostr/event.ts';
import { COMMENT, REACTION } from '../../src/nostr/kinds.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import type { StorePort } from '../../src/store/port.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { routeInbound, type InboundEnvelope } from '../../src/engine/router.ts';
import { handleContentEvent } from '../../src/engine/content.ts';
import { createProfileResolver } from '../../src/engine/profiles.ts';
import { CONVERSATION_KEY_CACHE_ENTRIES, createNip44ControlDecryptor } from '../../src/engine/nip44-decryptor.ts';
import { CryptoWorkerPool } from '../../src/nostr/crypto-worker-pool.ts';
import { handleOutbound } from '../../src/delivery/outbound.ts';
import type { OutboundNotification } from '../../src/delivery/deliver.ts';
import { createFcmTransport } from '../../src/delivery/fcm/sender.ts';
import { DONE, QueueSignal, runQueueWorker } from '../../src/roles/queue-worker.ts';
import { DELIVERY_CONCURRENCY, INBOUND_BATCH_SIZE, INBOUND_CONCURRENCY } from '../../src/roles/roles.ts';
import { startRedisServer } from '../../test/support/redis-server.ts';
import { printProfile, profile } from '../support/cpu-profile.ts';
import { startFcmFakeProcess } from '../support/fcm-fake-client.ts';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '10000' },
    events: { type: 'string', default: '10000' },
    rate: { type: 'string', default: '2000' },
    store: { type: 'string', default: 'both' },
    latency: { type: 'string', default: '20' },
  },
});
const USERS = Number(values.users);
const EVENTS = Number(values.events);
const RATE = Number(values.rate);
const ACTORS = 100;
const TICK_MS = 10;

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

interface Prepared {
  users: string[];
  actors: Array<{ secret: Uint8Array; pubkey: string }>;
  frames: string[];
  /** Expected pushes: `${eventId}:${token}`. */
  expected: Set<string>;
}

function prepare(): Prepared {
  const users = Array.from({ length: USERS }, () => getPublicKey(generateSecretKey()));
  const actors = Array.from({ length: ACTORS }, () => {
    const secret = generateSecretKey();
    return { secret, pubkey: getPublicKey(secret) };
  });
  const frames: string[] = [];
  const expected = new Set<string>();
  const now = Math.floor(Date.now() / 1000);
  for (let i = 0; i < EVENTS; i++) {
    const actor = actors[i % ACTORS] as Prepared['actors'][number];
    const owner = users[(i * 7919) % USERS] as string;
    const parent = users[(i * 104729 + 1) % USERS] as string;
    const comment = i % 2 === 1;
    const template = comment
      ? { kind: COMMENT, created_at: now, content: `comment ${i}`, tags: [['E', hex(generateSecretKey())], ['P', owner], ['e', hex(generateSecretKey())], ['p', parent]] }
      : { kind: REACTION, created_at: now, content: '+', tags: [['e', hex(generateSecretKey())], ['p', owner]] };
    const event = finalizeEvent(template, actor.secret);
    frames.push(JSON.stringify(event));
    expected.add(`${event.id}:t-${owner}`);
    if (comment) expected.add(`${event.id}:t-${parent}`);
  }
  return { users, actors, frames, expected };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function runOne(label: string, store: StorePort, prepared: Prepared, dir: string): Promise<void> {
  const logger = createLogger({ level: 'silent' });
  const metrics = new Metrics();
  for (let i = 0; i < prepared.users.length; i += 500) {
    await Promise.all(prepared.users.slice(i, i + 500).map((pk) => store.registerToken(pk, { token: `t-${pk}`, transport: 'fcm' })));
  }
  for (const [i, actor] of prepared.actors.entries()) await store.cacheProfile({ pubkey: actor.pubkey, name: `actor${i}` }, 3600);

  const fake = await startFcmFakeProcess(Number(values.latency), dir);
  const transport = createFcmTransport({ projectId: 'fake-project', credentialsPath: fake.credentialsPath, apiBaseUrl: fake.baseUrl, logger, metrics });
  if (!transport) throw new Error('no FCM transport');
  const verifier = await createWasmVerifier();
  // engine.crypto_workers = 1, as the service runs by default: signatures are checked off the main thread.
  const pool = new CryptoWorkerPool({ size: 1, secretHex: null, cacheCapacity: CONVERSATION_KEY_CACHE_ENTRIES });
  await pool.ready;
  const wake = new QueueSignal();
  const controller = new AbortController();
  const { signal } = controller;
  const profiles = createProfileResolver({ profile_relays: [], relays: [], profile_cache_ttl_secs: 3600, query_timeout_secs: 1 }, { store, verifier, logger, metrics });
  const contentDeps = {
    store,
    profiles,
    allowedPubkeys: new Set<string>(),
    defaultPreferenceKinds: [1, 7, 16, 1059, 30023, 34236],
    processedEventTtlSecs: 604_800,
    maxEventAgeSecs: 3600,
    clock: store.clock,
    logger,
    metrics,
    enqueueOutbound: async (n: OutboundNotification) => {
      await store.enqueue('outbound', { id: `${n.eventId}:${n.recipient}`, payload: n });
      wake.notify('outbound');
    },
  };
  const routerDeps = {
    store,
    decryptor: createNip44ControlDecryptor(hex(generateSecretKey())),
    servicePubkey: '00'.repeat(32),
    processedEventTtlSecs: 604_800,
    clock: store.clock,
    logger,
    metrics,
    handleContent: (envelope: InboundEnvelope) => handleContentEvent(contentDeps, envelope).then(() => undefined),
  };
  const common = { store, leaseMs: 60_000, maxAttempts: 10, pollMs: 20, signal, wake, logger, metrics };
  const engine = runQueueWorker<InboundEnvelope>({ ...common, queue: 'inbound', concurrency: INBOUND_CONCURRENCY, orderingKey: (item) => item.payload.event.pubkey, batchSize: INBOUND_BATCH_SIZE, handle: async (item) => (await routeInbound(routerDeps, item.payload), DONE) });
  const outbound = { store, transports: [transport], videoRecordTtlSecs: 3600, maxEventAgeSecs: 3600, logger, metrics };
  const delivery = runQueueWorker<OutboundNotification>({ ...common, queue: 'outbound', concurrency: DELIVERY_CONCURRENCY, batchSize: DELIVERY_CONCURRENCY, handle: (item) => handleOutbound(outbound, item, signal) });

  const arrivedAt = new Map<string, number>();
  const ingest = async (frame: string) => {
    const event = parseEvent(JSON.parse(frame));
    if (isEventRejection(event) || !(await pool.verify(event))) throw new Error('a pre-signed event failed validation');
    const receivedAtMs = Date.now();
    arrivedAt.set(event.id, receivedAtMs);
    await store.enqueue('inbound', { id: event.id, payload: { event, context: 'live', relay: 'bench', receivedAtMs } satisfies InboundEnvelope });
  };

  const started = Date.now();
  const trace = process.env.BENCH_TRACE
    ? setInterval(async () => {
        const [i, o] = await Promise.all([store.queueStats('inbound'), store.queueStats('outbound')]);
        console.log(`  t=${Date.now() - started} ms inbound ready ${i.ready} leased ${i.leased}; outbound ready ${o.ready} leased ${o.leased}`);
      }, 500)
    : undefined;
  if (RATE <= 0) {
    for (let i = 0; i < prepared.frames.length; i += 256) {
      await Promise.all(prepared.frames.slice(i, i + 256).map(ingest));
      wake.notify('inbound');
    }
  } else {
    const perTick = Math.max(1, Math.round((RATE * TICK_MS) / 1000));
    let next = 0;
    while (next < prepared.frames.length) {
      const due = Math.min(prepared.frames.length, Math.floor(((Date.now() - started) / 1000) * RATE) + perTick);
      if (due > next) {
        await Promise.all(prepared.frames.slice(next, due).map(ingest));
        next = due;
        wake.notify('inbound');
      }
      await new Promise((r) => setTimeout(r, TICK_MS));
    }
  }
  const offeredMs = Date.now() - started;

  // Wait for the pipeline to drain: both queues empty, then collect what the fake received.
  for (;;) {
    const [inbound, out] = await Promise.all([store.queueStats('inbound'), store.queueStats('outbound')]);
    if (inbound.ready + inbound.leased + out.ready + out.leased === 0) break;
    if (Date.now() - started > 600_000) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  clearInterval(trace);
  const { received, peakStreams } = await fake.report();
  controller.abort();
  await Promise.all([engine, delivery]);
  await transport.close();
  await pool.close();
  await fake.stop();

  const seen = new Map<string, number>();
  const latencies: number[] = [];
  let lastAt = started;
  for (const [eventId, token, at] of received) {
    const key = `${eventId}:${token}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    const arrived = arrivedAt.get(eventId);
    if (arrived !== undefined) latencies.push(at - arrived);
    lastAt = Math.max(lastAt, at);
  }
  const missing = [...prepared.expected].filter((k) => !seen.has(k)).length;
  const duplicates = [...seen.values()].filter((n) => n > 1).length;
  const unexpected = [...seen.keys()].filter((k) => !prepared.expected.has(k)).length;
  latencies.sort((a, b) => a - b);
  const totalSecs = (lastAt - started) / 1000;
  console.log(
    `social ${label}: offered ${prepared.frames.length} events at ${RATE > 0 ? `${RATE}/s` : 'once'} (${(prepared.frames.length / (offeredMs / 1000)).toFixed(0)}/s over ${(offeredMs / 1000).toFixed(1)} s); ` +
      `completed ${(prepared.frames.length / totalSecs).toFixed(0)} events/s, ${(received.length / totalSecs).toFixed(0)} pushes/s; ` +
      `arrival→FCM p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms; peak HTTP/2 streams ${peakStreams}`,
  );
  const ok = missing === 0 && duplicates === 0 && unexpected === 0;
  console.log(`  verdict: ${ok ? 'OK' : 'FAIL'} (${prepared.expected.size} expected pushes, ${missing} missing, ${duplicates} duplicated, ${unexpected} unexpected)`);
  if (!ok) process.exitCode = 1;
}

// Signing and key generation go through libsecp256k1 (WASM) too, once it is loaded.
await createWasmVerifier();
console.log(`preparing ${USERS} users, ${EVENTS} signed likes and comments from ${ACTORS} actors…`);
const prepared = prepare();
const dir = mkdtempSync(join(tmpdir(), 'np-bench-social-'));
if (values.store === 'sqlite' || values.store === 'both') {
  const store = await openSqliteStore({ path: join(dir, 'bench.sqlite') });
  const { top } = await profile(() => runOne('sqlite', store, prepared, dir));
  if (process.env.BENCH_PROFILE) printProfile('sqlite', top);
  await store.close();
}
if (values.store === 'redis' || values.store === 'both') {
  const redis = await startRedisServer();
  const store = await openRedisStore({ url: redis.url });
  const { top } = await profile(() => runOne('redis', store, prepared, dir));
  if (process.env.BENCH_PROFILE) printProfile('redis', top);
  await store.close();
  await redis.stop();
}
rmSync(dir, { recursive: true, force: true });
