/**
 * bench/social: pre-signed likes and comments for registered users, driven through the service's
 * own pipeline — the real roles `engine,delivery,scheduler` started by `startService` from a
 * configuration, exactly as `nostr-push serve` wires them (coalescing on, as by default) — into
 * the FCM fake in its own process (20 ms answer latency). This process plays the listener: it
 * parses and verifies each event (libsecp256k1 on a worker thread) and queues it inbound.
 * Prints events/s, pushes/s, p50/p99 from event arrival to the FCM request, the CPU each process
 * spent per event (and this process's main thread alone: every role shares its event loop), and a
 * verdict: every expected (event, token) pushed exactly once. BENCH_TRACE=1 prints the queues and
 * the worst event-loop delay every half second.
 *
 *   node --import tsx bench/social/run.ts [--users 10000] [--events 10000] [--rate 2000] [--warmup 5] [--store sqlite|redis|layout|cluster|both|all] [--latency 20] [--phased] [--http2-client builtin|node|both]
 *   --http2-client runs the whole benchmark on each HTTP/2 client named (delivery.http2_client).
 *   --queue-shards N sets `redis.queue_shards` (the cluster layout's shards per queue; 0, the
 *   default, keeps its default of 8): e.g. 3 for as many shards as a 3-master cluster's masters.
 *   --rate 0 offers everything at once (peak throughput).
 *   --warmup offers events at the same rate for that many seconds first (paced runs only), and waits
 *   for their pushes before the measured phase: a fresh process is still compiling its hot paths,
 *   and the backlog it builds meanwhile would otherwise drain through the measured phase. Warm-up
 *   events are checked like every other, their latency is reported apart; rates, percentiles and
 *   CPU per event are the measured phase's.
 *   --phased runs the listener part, the engine and the delivery one after another, each drained
 *   before the next starts, and prints the CPU and the Redis commands (scripts' own included) each
 *   stage spent per event (no latency figures).
 *   --user-relays off,on,off,on runs the whole benchmark once per value, in that order, with
 *   `nostr.user_relays.enabled` set so (issue 36: the engine's part of users' relays — relay-list
 *   events, registration fetches, the backfill walk — on vs off; this benchmark has no listener).
 *   Absent, the default (on) without a line of its own.
 *   --inbox on|off (default on) runs with the inbox counters, badges and alert words, or without
 *   (`inbox.enabled`): the difference of two runs is their cost. --alert-words N (default 1000)
 *   watches N words, two users each; every other comment names a watched word, so it is matched
 *   and counted (keyword pushes stay off, the default). With the inbox on, every user's counters
 *   are checked after the run against the counts the generator expects (a second verdict).
 */
import { HTTP2_CLIENT_KINDS, type Http2ClientKind } from '../../src/config/defaults.ts';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/wasm';
import { loadConfig, resolveStoreLocation } from '../../src/config/load.ts';
import { openStore } from '../../src/store/open.ts';
import type { StorePort } from '../../src/store/port.ts';
import { withTurnBatching } from '../../src/store/turn-batching.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { isEventRejection, parseEvent } from '../../src/nostr/event.ts';
import { COMMENT, REACTION } from '../../src/nostr/kinds.ts';
import { CryptoWorkerPool } from '../../src/nostr/crypto-worker-pool.ts';
import type { InboundEnvelope } from '../../src/engine/router.ts';
import { startService, type RunningService } from '../../src/service.ts';
import { startRedisServer } from '../../test/support/redis-server.ts';
import { startRedisCluster } from '../../test/support/redis-cluster.ts';
import { printProfile, profile } from '../support/cpu-profile.ts';
import { startFcmFakeProcess } from '../support/fcm-fake-client.ts';
import { useWasmSigning } from '../support/wasm-signing.ts';
import {
  commandsLine,
  cpuLine,
  latencySummary,
  redisCommandCalls,
  resetRedisStats,
  sampleCpu,
  percentile,
  type RedisNodes,
} from './measure.ts';
import { runUnderServerNodeFlags } from '../support/server-node-flags.ts';

runUnderServerNodeFlags();
const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '10000' },
    events: { type: 'string', default: '10000' },
    rate: { type: 'string', default: '2000' },
    store: { type: 'string', default: 'both' },
    latency: { type: 'string', default: '20' },
    phased: { type: 'boolean', default: false },
    warmup: { type: 'string', default: '5' },
    inbox: { type: 'string', default: 'on' },
    'alert-words': { type: 'string', default: '1000' },
    'http2-client': { type: 'string', default: 'builtin' },
    'queue-shards': { type: 'string', default: '0' },
    'user-relays': { type: 'string', default: '' },
  },
});
/** `nostr.user_relays.enabled` per run, in order; [null]: one run with the default. */
const USER_RELAY_RUNS: Array<boolean | null> =
  values['user-relays'] === ''
    ? [null]
    : values['user-relays'].split(',').map((mode) => {
        if (mode !== 'on' && mode !== 'off') throw new Error(`--user-relays takes on and off values, not ${mode}`);
        return mode === 'on';
      });
/** The user-relays setting of the run in progress, and its tag in file names. */
let userRelays: boolean | null = null;
let runTag = '';
/** Inbox counters, badges and alert words on (`inbox.enabled`). */
const INBOX = values.inbox !== 'off';
/** Distinct watched words; each watched by {@link WATCHERS_PER_WORD} users. */
const ALERT_WORDS = INBOX ? Number(values['alert-words']) : 0;
const WATCHERS_PER_WORD = 2;
/** The i-th watched word: letters and digits, one token. */
const alertWord = (i: number): string => `watchword${i}`;
const HTTP2_CLIENTS: Http2ClientKind[] =
  values['http2-client'] === 'both' ? [...HTTP2_CLIENT_KINDS] : HTTP2_CLIENT_KINDS.filter((kind) => kind === values['http2-client']);
if (HTTP2_CLIENTS.length === 0) throw new Error(`--http2-client must be builtin, node or both, not ${values['http2-client']}`);
/** The HTTP/2 client of the run in progress. */
let http2Client: Http2ClientKind = 'builtin';
/** Run the stages one after another, each drained before the next, to see what each costs. */
const PHASED = values.phased;
const USERS = Number(values.users);
const EVENTS = Number(values.events);
const RATE = Number(values.rate);
/** Events offered before the measured phase, at its rate (paced, unphased runs only). */
const WARMUP_EVENTS = RATE > 0 && !PHASED ? Math.round(RATE * Number(values.warmup)) : 0;
const ACTORS = 100;
const TICK_MS = 10;
/** How often the drain check asks the store for queue sizes (a count over the whole queue: not too often). */
const DRAIN_POLL_MS = 1000;

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
// 32 random bytes: below the curve order but for a chance of 2^-128.
const SERVICE_KEY_HEX = randomBytes(32).toString('hex');

interface Prepared {
  users: string[];
  actors: Array<{ secret: Uint8Array; pubkey: string }>;
  /** Warm-up events first ({@link WARMUP_EVENTS}), then the measured ones. */
  frames: string[];
  warmupIds: Set<string>;
  /** Expected pushes: `${eventId}:${token}`. */
  expected: Set<string>;
  /** Each user's watched words. */
  watches: Map<string, string[]>;
  /** Expected counter totals per user: like, comment, keyword. */
  counts: Map<string, { like: number; comment: number; keyword: number }>;
}

function prepare(): Prepared {
  const users = Array.from({ length: USERS }, () => getPublicKey(generateSecretKey()));
  const actors = Array.from({ length: ACTORS }, () => {
    const secret = generateSecretKey();
    return { secret, pubkey: getPublicKey(secret) };
  });
  const frames: string[] = [];
  const expected = new Set<string>();
  const watchersOf = (word: number): string[] => [
    ...new Set(Array.from({ length: WATCHERS_PER_WORD }, (_, k) => users[(word * 7 + k * 3301) % USERS] as string)),
  ];
  const watches = new Map<string, string[]>();
  for (let w = 0; w < ALERT_WORDS; w++) for (const user of watchersOf(w)) watches.set(user, [...(watches.get(user) ?? []), alertWord(w)]);
  const counts = new Map<string, { like: number; comment: number; keyword: number }>();
  const bump = (user: string, type: 'like' | 'comment' | 'keyword'): void => {
    const entry = counts.get(user) ?? { like: 0, comment: 0, keyword: 0 };
    entry[type]++;
    counts.set(user, entry);
  };
  const now = Math.floor(Date.now() / 1000);
  const warmupIds = new Set<string>();
  for (let i = 0; i < WARMUP_EVENTS + EVENTS; i++) {
    const actor = actors[i % ACTORS] as Prepared['actors'][number];
    const owner = users[(i * 7919) % USERS] as string;
    const parent = users[(i * 104729 + 1) % USERS] as string;
    const comment = i % 2 === 1;
    // Every other comment names a watched word (and one nobody watches).
    const word = comment && ALERT_WORDS > 0 && i % 4 === 1 ? (i * 13) % ALERT_WORDS : null;
    // Every like is on a post of its own, so coalescing sends each at once (its group's first).
    const template = comment
      ? {
          kind: COMMENT,
          created_at: now,
          content: word === null ? `comment ${i}` : `comment ${i} about ${alertWord(word)} and unwatched${i}`,
          tags: [
            ['E', hex(generateSecretKey())],
            ['P', owner],
            ['e', hex(generateSecretKey())],
            ['p', parent],
          ],
        }
      : {
          kind: REACTION,
          created_at: now,
          content: '+',
          tags: [
            ['e', hex(generateSecretKey())],
            ['p', owner],
          ],
        };
    const event = finalizeEvent(template, actor.secret);
    frames.push(JSON.stringify(event));
    if (i < WARMUP_EVENTS) warmupIds.add(event.id);
    expected.add(`${event.id}:t-${owner}`);
    if (comment) expected.add(`${event.id}:t-${parent}`);
    bump(owner, comment ? 'comment' : 'like');
    if (comment && parent !== owner) bump(parent, 'comment');
    if (word !== null) for (const watcher of watchersOf(word)) bump(watcher, 'keyword');
  }
  return { users, actors, frames, warmupIds, expected, watches, counts };
}

function serviceConfig(roles: string, storeUrl: string, dir: string, fake: { credentialsPath: string; baseUrl: string }, label: string) {
  return loadConfig({
    env: {
      NOSTR_PUSH__ROLES: roles,
      NOSTR_PUSH__DATA_DIR: join(dir, `data-${label}-${http2Client}${runTag}`),
      ...(userRelays === null ? {} : { NOSTR_PUSH__NOSTR__USER_RELAYS__ENABLED: String(userRelays) }),
      NOSTR_PUSH__STORE__URL: storeUrl,
      NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: SERVICE_KEY_HEX,
      NOSTR_PUSH__NOSTR__RELAYS: 'ws://127.0.0.1:9',
      NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fake.credentialsPath,
      NOSTR_PUSH__FIREBASE__API_BASE_URL: fake.baseUrl,
      NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
      NOSTR_PUSH__CLEANUP__ENABLED: 'false',
      NOSTR_PUSH__INBOX__ENABLED: String(INBOX),
      NOSTR_PUSH__LOG__LEVEL: 'warn',
      NOSTR_PUSH__DELIVERY__HTTP2_CLIENT: http2Client,
      // `--store layout`: one Redis with the cluster key layout, the layout's cost without a cluster's.
      ...(label === 'redis-cluster-layout' ? { NOSTR_PUSH__REDIS__KEY_LAYOUT: 'cluster' } : {}),
      // `--queue-shards N`: the cluster layout's shards per durable queue (the divine layout has one).
      ...(label.startsWith('redis-cluster') && values['queue-shards'] !== '0'
        ? { NOSTR_PUSH__REDIS__QUEUE_SHARDS: values['queue-shards'] }
        : {}),
    },
  }).config;
}

async function seed(store: StorePort, prepared: Prepared): Promise<void> {
  for (let i = 0; i < prepared.users.length; i += 500) {
    await Promise.all(prepared.users.slice(i, i + 500).map((pk) => store.registerToken(pk, { token: `t-${pk}`, transport: 'fcm' })));
  }
  for (const [i, actor] of prepared.actors.entries()) await store.cacheProfile({ pubkey: actor.pubkey, name: `actor${i}` }, 3600);
  const watches = [...prepared.watches];
  for (let i = 0; i < watches.length; i += 500)
    await Promise.all(watches.slice(i, i + 500).map(([user, words]) => store.replaceAlertWords(user, words)));
}

/** Every user's like, comment and keyword totals against the generator's; the number that differ. */
async function counterMismatches(store: StorePort, prepared: Prepared): Promise<number> {
  let mismatches = 0;
  for (let i = 0; i < prepared.users.length; i += 500) {
    const batch = prepared.users.slice(i, i + 500);
    const read = await Promise.all(batch.map((user) => store.readInboxCounts(user)));
    batch.forEach((user, k) => {
      const want = prepared.counts.get(user) ?? { like: 0, comment: 0, keyword: 0 };
      const got = read[k]?.types;
      if (got?.like.total !== want.like || got.comment.total !== want.comment || got.keyword.total !== want.keyword) mismatches++;
    });
  }
  return mismatches;
}

/** The listener's part: parse, verify off the main thread, queue inbound (a turn's events in one call, as the listener role does). */
function ingester(plainStore: StorePort, pool: CryptoWorkerPool, arrivedAt: Map<string, number>): (frame: string) => Promise<void> {
  const store = withTurnBatching(plainStore);
  return async (frame) => {
    const event = parseEvent(JSON.parse(frame));
    if (isEventRejection(event) || !(await pool.verify(event))) throw new Error('a pre-signed event failed validation');
    const receivedAtMs = Date.now();
    arrivedAt.set(event.id, receivedAtMs);
    await store.enqueue('inbound', {
      id: event.id,
      payload: { event, context: 'live', relay: 'bench', receivedAtMs } satisfies InboundEnvelope,
    });
  };
}

async function offer(frames: string[], ingest: (frame: string) => Promise<void>, wake: () => void): Promise<number> {
  const started = Date.now();
  if (RATE <= 0) {
    for (let i = 0; i < frames.length; i += 256) {
      await Promise.all(frames.slice(i, i + 256).map(ingest));
      wake();
    }
  } else {
    const perTick = Math.max(1, Math.round((RATE * TICK_MS) / 1000));
    let next = 0;
    while (next < frames.length) {
      const due = Math.min(frames.length, Math.floor(((Date.now() - started) / 1000) * RATE) + perTick);
      if (due > next) {
        await Promise.all(frames.slice(next, due).map(ingest));
        next = due;
        wake();
      }
      await new Promise((r) => setTimeout(r, TICK_MS));
    }
  }
  return Date.now() - started;
}

/** Wait until `queues` are empty (nothing ready or leased). */
async function drained(store: StorePort, queues: Array<'inbound' | 'outbound'>, sinceMs: number): Promise<void> {
  for (;;) {
    const stats = await Promise.all(queues.map((q) => store.queueStats(q)));
    if (stats.every((s) => s.ready + s.leased === 0)) return;
    if (Date.now() - sinceMs > 600_000) throw new Error('the pipeline did not drain within 10 minutes');
    await new Promise((r) => setTimeout(r, DRAIN_POLL_MS));
  }
}

async function runOne(label: string, storeUrl: string, prepared: Prepared, dir: string, redisNodes?: RedisNodes): Promise<void> {
  const fake = await startFcmFakeProcess(Number(values.latency), dir);
  const pool = new CryptoWorkerPool({ size: 1, secretHex: null, cacheCapacity: 16 });
  await pool.ready;
  const arrivedAt = new Map<string, number>();
  const events = prepared.frames.length - prepared.warmupIds.size;
  if (redisNodes) await resetRedisStats(redisNodes.urls);
  let started: number;
  /** When offering began (the warm-up's start, if there is one). */
  let runStarted = Date.now();
  let offeredMs = 0;
  let cpuSummary: string;

  if (PHASED) {
    // One stage at a time, each drained before the next starts: the CPU each stage costs per event.
    const store = await openStore(resolveStoreLocation(serviceConfig('engine', storeUrl, dir, fake, label)), {
      logger: createLogger({ level: 'warn' }),
    });
    await seed(store, prepared);
    const stageCommands: string[] = [];
    const stage = async (name: string, work: () => Promise<void>): Promise<void> => {
      const before = redisNodes ? await redisCommandCalls(redisNodes.urls) : null;
      const { top } = await profile(work);
      if (process.env.BENCH_PROFILE) printProfile(`${label} ${name}`, top);
      if (before && redisNodes)
        stageCommands.push(
          `  Redis commands per event, ${name}: ${commandsLine(before, await redisCommandCalls(redisNodes.urls), events)}`,
        );
    };
    const c0 = sampleCpu(fake.pid, redisNodes);
    started = Date.now();
    await stage('listener', async () => void (offeredMs = await offer(prepared.frames, ingester(store, pool, arrivedAt), () => undefined)));
    const c1 = sampleCpu(fake.pid, redisNodes);
    await store.close();
    const engine = await startService(serviceConfig('engine', storeUrl, dir, fake, label));
    const c1b = sampleCpu(fake.pid, redisNodes);
    await stage('engine', async () => {
      engine.wake.notify('inbound');
      await drained(engine.store, ['inbound'], started);
    });
    const c2 = sampleCpu(fake.pid, redisNodes);
    await engine.stop();
    const delivery = await startService(serviceConfig('delivery', storeUrl, dir, fake, label));
    const c2b = sampleCpu(fake.pid, redisNodes);
    await stage('delivery', async () => {
      delivery.wake.notify('outbound');
      await drained(delivery.store, ['outbound'], started);
    });
    const c3 = sampleCpu(fake.pid, redisNodes);
    await delivery.stop();
    cpuSummary = [
      `  CPU per event, listener (parse, verify, queue): ${cpuLine(c0, c1, events)}`,
      `  CPU per event, engine: ${cpuLine(c1b, c2, events)}`,
      `  CPU per event, delivery: ${cpuLine(c2b, c3, events)}`,
      ...stageCommands,
    ].join('\n');
  } else {
    const service: RunningService = await startService(serviceConfig('engine,delivery,scheduler', storeUrl, dir, fake, label));
    await seed(service.store, prepared);
    const ingest = ingester(service.store, pool, arrivedAt);
    const wake = () => service.wake.notify('inbound');
    runStarted = Date.now();
    if (WARMUP_EVENTS > 0) {
      await offer(prepared.frames.slice(0, WARMUP_EVENTS), ingest, wake);
      // The cold start's backlog is not the measured phase's: near capacity a queue drains at the
      // few percent of the rate the service has to spare, so it would carry through the phase.
      await drained(service.store, ['inbound', 'outbound'], runStarted);
    }
    const c0 = sampleCpu(fake.pid, redisNodes);
    started = Date.now();
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    const printTrace = async (): Promise<void> => {
      const [i, o] = await Promise.all([service.store.queueStats('inbound'), service.store.queueStats('outbound')]);
      console.log(
        `  t=${Date.now() - started} ms inbound ready ${i.ready} leased ${i.leased}; outbound ready ${o.ready} leased ${o.leased}; event-loop delay max ${(loopDelay.max / 1e6).toFixed(0)} ms`,
      );
      loopDelay.reset();
    };
    const trace = process.env.BENCH_TRACE ? setInterval(() => void printTrace(), 500) : undefined;
    offeredMs = await offer(prepared.frames.slice(WARMUP_EVENTS), ingest, wake);
    await drained(service.store, ['inbound', 'outbound'], started);
    clearInterval(trace);
    cpuSummary = `  CPU per event: ${cpuLine(c0, sampleCpu(fake.pid, redisNodes), events)}`;
    await service.stop();
  }
  const commands = redisNodes ? await redisCommandCalls(redisNodes.urls) : null;
  let counterVerdict = '';
  if (INBOX) {
    const store = await openStore(resolveStoreLocation(serviceConfig('engine', storeUrl, dir, fake, label)), {
      logger: createLogger({ level: 'warn' }),
    });
    const mismatches = await counterMismatches(store, prepared);
    await store.close();
    counterVerdict = `  counters: ${mismatches === 0 ? 'OK' : 'FAIL'} (${prepared.users.length} users' like, comment and keyword totals checked, ${mismatches} differ; ${ALERT_WORDS} alert words watched)`;
    if (mismatches > 0) process.exitCode = 1;
  }
  const { received, peakStreams } = await fake.report();
  await pool.close();
  await fake.stop();

  const seen = new Map<string, number>();
  const latencies: number[] = [];
  const warmupLatencies: number[] = [];
  let measuredPushes = 0;
  /** With BENCH_TRACE: latencies by the second of the run (warm-up included) their event arrived in. */
  const bySecond: number[][] | null = process.env.BENCH_TRACE ? [] : null;
  let lastAt = started;
  for (const [eventId, token, at] of received) {
    const key = `${eventId}:${token}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    const arrived = arrivedAt.get(eventId);
    if (arrived === undefined) continue;
    if (prepared.warmupIds.has(eventId)) {
      warmupLatencies.push(at - arrived);
    } else {
      latencies.push(at - arrived);
      measuredPushes++;
      lastAt = Math.max(lastAt, at);
    }
    if (bySecond) (bySecond[Math.floor((arrived - runStarted) / 1000)] ??= []).push(at - arrived);
  }
  const missing = [...prepared.expected].filter((k) => !seen.has(k)).length;
  const duplicates = [...seen.values()].filter((n) => n > 1).length;
  const unexpected = [...seen.keys()].filter((k) => !prepared.expected.has(k)).length;
  latencies.sort((a, b) => a - b);
  warmupLatencies.sort((a, b) => a - b);
  const totalSecs = (lastAt - started) / 1000;
  if (PHASED) console.log(`social ${label} (phased): ${events} events through each stage in turn`);
  else
    console.log(
      `social ${label}: offered ${events} events at ${RATE > 0 ? `${RATE}/s` : 'once'} (${(events / (offeredMs / 1000)).toFixed(0)}/s over ${(offeredMs / 1000).toFixed(1)} s); ` +
        `completed ${(events / totalSecs).toFixed(0)} events/s, ${(measuredPushes / totalSecs).toFixed(0)} pushes/s; ` +
        `arrival→FCM ${latencySummary(latencies)}; peak HTTP/2 streams ${peakStreams}`,
    );
  console.log(cpuSummary);
  if (warmupLatencies.length > 0) {
    console.log(
      `  warm-up before it: ${prepared.warmupIds.size} events over ${values.warmup} s; arrival→FCM ${latencySummary(warmupLatencies)}`,
    );
  }
  if (bySecond) {
    const seconds = bySecond.map((ms, second) => {
      ms.sort((a, b) => a - b);
      return `${second}s ${percentile(ms, 50)}/${percentile(ms, 99)}`;
    });
    console.log(`  arrival→FCM p50/p99 ms by second of arrival: ${seconds.join(', ')}`);
  }
  if (commands) {
    const perEventCalls = [...commands].filter(([name]) => name !== 'info' && !name.startsWith('config')).sort((a, b) => b[1] - a[1]);
    const total = perEventCalls.reduce((sum, [, n]) => sum + n, 0);
    const all = prepared.frames.length;
    console.log(
      `  Redis commands per event (scripts' own included, warm-up too): ${(total / all).toFixed(1)} (${perEventCalls
        .slice(0, 8)
        .map(([name, n]) => `${name} ${(n / all).toFixed(2)}`)
        .join(', ')}, …)`,
    );
  }
  const ok = missing === 0 && duplicates === 0 && unexpected === 0;
  console.log(
    `  verdict: ${ok ? 'OK' : 'FAIL'} (${prepared.expected.size} expected pushes, ${missing} missing, ${duplicates} duplicated, ${unexpected} unexpected)`,
  );
  if (!ok) process.exitCode = 1;
  if (counterVerdict) console.log(counterVerdict);
}

await useWasmSigning();
console.log(
  `preparing ${USERS} users, ${WARMUP_EVENTS + EVENTS} signed likes and comments (${WARMUP_EVENTS} of them warm-up) from ${ACTORS} actors; inbox ${INBOX ? `on, ${ALERT_WORDS} alert words` : 'off'}…`,
);
const prepared = prepare();
const dir = mkdtempSync(join(tmpdir(), 'np-bench-social-'));
/** The whole run profiled as one (the phased mode profiles each stage instead). */
async function profiled(label: string, run: () => Promise<void>): Promise<void> {
  if (PHASED) return run();
  const { top } = await profile(run);
  if (process.env.BENCH_PROFILE) printProfile(label, top);
}
for (const [run, setting] of USER_RELAY_RUNS.entries())
  for (const client of HTTP2_CLIENTS) {
    http2Client = client;
    userRelays = setting;
    runTag = setting === null ? '' : `-user-relays-${run}`;
    console.log(`delivery.http2_client: ${client}`);
    if (setting !== null) console.log(`nostr.user_relays.enabled: ${setting} (run ${run + 1} of ${USER_RELAY_RUNS.length})`);
    if (values.store === 'sqlite' || values.store === 'both' || values.store === 'all') {
      await profiled('sqlite', () => runOne('sqlite', `sqlite:${join(dir, `bench-${client}${runTag}.sqlite`)}`, prepared, dir));
    }
    if (values.store === 'redis' || values.store === 'both' || values.store === 'all') {
      const redis = await startRedisServer();
      await profiled('redis', () => runOne('redis', redis.url, prepared, dir, { pids: [redis.pid], urls: [redis.url] }));
      await redis.stop();
    }
    if (values.store === 'layout') {
      const redis = await startRedisServer();
      await profiled('redis-cluster-layout', () =>
        runOne('redis-cluster-layout', redis.url, prepared, dir, { pids: [redis.pid], urls: [redis.url] }),
      );
      await redis.stop();
    }
    if (values.store === 'cluster' || values.store === 'all') {
      // Three masters on this machine, the cluster key layout (issue 18): the cost of the layout.
      const cluster = await startRedisCluster({ masters: 3 });
      const nodes = { pids: cluster.nodes.map((node) => node.pid), urls: cluster.nodes.map((node) => node.url) };
      await profiled('redis-cluster', () => runOne('redis-cluster', cluster.url, prepared, dir, nodes));
      await cluster.stop();
    }
  }
rmSync(dir, { recursive: true, force: true });
