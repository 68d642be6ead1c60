/**
 * bench/ntfy: a load generator and correctness checker for the built-in ntfy server, in the style
 * of seed 004's loadgen. The server is the real binary (roles api, pusher, janitor) in its own
 * process, on each store adapter; this process plays the app servers and the phones.
 *
 * load mode: one subscriber per topic (or `--topics-per-conn` topics per connection, as the ntfy
 * app multiplexes), opened before publishing starts (the open barrier); one publisher per topic
 * sending 0, 1, 2, … paced to `--rate` in total; every subscriber asserts its topics' sequences
 * arrive in order, without gaps or duplicates, and records send → receive latency. With
 * `--reconnects N`, N subscribers drop their connection halfway and resume with `since=<last id>`.
 * The verdict is PASS only with zero loss, reordering, duplicates, gaps and errors.
 *
 * Publishing runs `--warmup` seconds before the measured `--duration` (a freshly started server
 * and generator are still compiling their hot paths); warm-up messages are checked like every
 * other, and their latency is reported on its own line. Rates, latency percentiles and the CPU
 * per message (server, this generator, redis-server) are those of the measured phase.
 *
 * idle mode: `--idle-subs` subscriptions held open; reports the server's resident memory.
 *
 * Run every measurement under the benchmark lock, on an otherwise quiet machine (both sides share
 * its cores): `flock /tmp/nostr-push-bench.lock npm run bench:ntfy -- …`. `--help` lists the options.
 */
import { NTFY_WEBSOCKET_KINDS, type NtfyWebSocketKind } from '../../src/config/defaults.ts';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startRedisServer, type PrivateRedisServer } from '../../test/support/redis-server.ts';
import { freePort, ntfyServiceEnv, startServiceProcess } from '../../test/support/service-process.ts';
import { formatUs } from './histogram.ts';
import { Redis } from 'ioredis';
import { BenchSubscriber, newPublishTotals, nowUs, runPublishers, Tally, withConcurrency } from './load.ts';

const USAGE = `npm run bench:ntfy -- [options]

  --store sqlite|redis|both   store adapter of the server (both)
  --mode load|idle            load: publish and check; idle: hold --idle-subs subscriptions (load)
  --topics N                  topics, one sequential publisher each (1000)
  --rate N                    messages per second over all topics (5000)
  --warmup S                  seconds published before the measured phase (3)
  --duration S                measured seconds (30)
  --transport json|ws         subscription transport (json)
  --websocket builtin|ws|both the server's WebSocket server (ntfy.websocket; builtin); both runs each in turn
  --topics-per-conn N         topics per subscription connection, as the ntfy app multiplexes (1)
  --payload N                 padding bytes per message (100)
  --reconnects N              subscribers that drop and resume with since=<last id> halfway (0)
  --idle-subs N               idle mode: subscriptions to hold (10000)
  --grace S                   seconds to wait for the last deliveries (10)
  --node-options OPTS         NODE_OPTIONS of the server process
  --server-url URL --server-pid PID
                              a server started by hand (e.g. node --cpu-prof bin/nostr-push.js serve);
                              BENCH_REDIS_URL=redis://… also reports its redis-server's CPU
`;

const { values } = parseArgs({
  options: {
    help: { type: 'boolean', short: 'h', default: false },
    store: { type: 'string', default: 'both' },
    topics: { type: 'string', default: '1000' },
    rate: { type: 'string', default: '5000' },
    duration: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '3' },
    transport: { type: 'string', default: 'json' },
    websocket: { type: 'string', default: 'builtin' },
    'topics-per-conn': { type: 'string', default: '1' },
    payload: { type: 'string', default: '100' },
    reconnects: { type: 'string', default: '0' },
    mode: { type: 'string', default: 'load' },
    'idle-subs': { type: 'string', default: '10000' },
    grace: { type: 'string', default: '10' },
    'node-options': { type: 'string', default: '' },
    'server-url': { type: 'string', default: '' },
    'server-pid': { type: 'string', default: '' },
  },
});

if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const TOPICS = Number(values.topics);
const RATE = Number(values.rate);
const DURATION_MS = Number(values.duration) * 1000;
const WARMUP_MS = Number(values.warmup) * 1000;
const TRANSPORT = values.transport === 'ws' ? 'ws' : 'json';
const WEBSOCKETS: NtfyWebSocketKind[] =
  values.websocket === 'both' ? [...NTFY_WEBSOCKET_KINDS] : NTFY_WEBSOCKET_KINDS.filter((kind) => kind === values.websocket);
if (WEBSOCKETS.length === 0) throw new Error(`--websocket must be builtin, ws or both, not ${values.websocket}`);
/** The WebSocket server of the run in progress. */
let websocketServer: NtfyWebSocketKind = 'builtin';
const TOPICS_PER_CONN = Math.max(1, Number(values['topics-per-conn']));
const PAYLOAD_BYTES = Number(values.payload);
const RECONNECTS = Number(values.reconnects);
const IDLE_SUBS = Number(values['idle-subs']);
const GRACE_MS = Number(values.grace) * 1000;
/** Subscriptions opened at once while connecting. */
const CONNECT_CONCURRENCY = 200;
/** HTTP connections the publishers share. */
const PUBLISH_SOCKETS = 64;
const MIB = 1024 * 1024;

interface ProcessSample {
  rssBytes: number;
  cpuMs: number;
  /** Of which in the kernel (system calls: socket reads and writes, SQLite's file I/O). */
  systemMs: number;
}

/** Resident memory and CPU time of a process, from /proc (Linux). */
function sampleProcess(pid: number): ProcessSample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of stat (11 and 12 after the command name), in clock ticks (100/s).
  const userTicks = Number(fields[11] ?? 0);
  const systemTicks = Number(fields[12] ?? 0);
  return { rssBytes: rssKb * 1024, cpuMs: (userTicks + systemTicks) * 10, systemMs: systemTicks * 10 };
}

/** CPU time of this process (ms). */
function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** CPU time redis-server has used (ms), from INFO; 0 without Redis. */
async function redisCpuMs(url: string | undefined): Promise<number> {
  if (!url) return 0;
  const client = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  try {
    const info = await client.info('cpu');
    const seconds = (name: string) => Number(new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1] ?? 0);
    return (seconds('used_cpu_sys') + seconds('used_cpu_user')) * 1000;
  } finally {
    client.disconnect();
  }
}

interface BenchServer {
  pid: number;
  baseUrl: string;
  /** The private redis-server's URL (Redis store only). */
  redisUrl?: string;
  cleanup: () => Promise<void>;
}

async function startServer(store: 'sqlite' | 'redis'): Promise<BenchServer> {
  if (values['server-url']) {
    // A server started by hand (e.g. under --cpu-prof, which NODE_OPTIONS does not allow).
    return {
      pid: Number(values['server-pid']),
      baseUrl: values['server-url'],
      redisUrl: process.env.BENCH_REDIS_URL,
      cleanup: async () => undefined,
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), `bench-ntfy-${store}-`));
  let redis: PrivateRedisServer | undefined;
  if (store === 'redis') redis = await startRedisServer();
  const port = await freePort();
  const service = await startServiceProcess({
    env: {
      ...ntfyServiceEnv({ dataDir, port, redisUrl: redis?.url }),
      NOSTR_PUSH__NTFY__WEBSOCKET: websocketServer,
      ...(values['node-options'] ? { NODE_OPTIONS: values['node-options'] } : {}),
    },
  });
  return {
    pid: service.child.pid as number,
    baseUrl: `http://127.0.0.1:${port}`,
    ...(redis ? { redisUrl: redis.url } : {}),
    cleanup: async () => {
      await service.stop();
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function topicNames(count: number, prefix: string): string[] {
  const nonce = randomBytes(4).toString('hex');
  return Array.from({ length: count }, (_, i) => `${prefix}${nonce}${String(i).padStart(6, '0')}`);
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** One gauge of the server's Prometheus default metrics (0 when absent). */
async function serverMetric(baseUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text().catch(() => '');
  return Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? 0);
}

/** The server's V8 heap in use and external memory. */
async function heapOf(baseUrl: string): Promise<{ heapBytes: number; externalBytes: number }> {
  return {
    heapBytes: await serverMetric(baseUrl, 'nodejs_heap_size_used_bytes'),
    externalBytes: await serverMetric(baseUrl, 'nodejs_external_memory_bytes'),
  };
}

/** Resources used over the measured phase. */
interface Usage {
  server: ProcessSample;
  clientCpuMs: number;
  redisCpuMs: number;
  published: number;
  atMs: number;
}

async function usageNow(pid: number, redisUrl: string | undefined, published: number): Promise<Usage> {
  return {
    server: sampleProcess(pid),
    clientCpuMs: ownCpuMs(),
    redisCpuMs: await redisCpuMs(redisUrl),
    published,
    atMs: performance.now(),
  };
}

async function runLoad(store: 'sqlite' | 'redis'): Promise<boolean> {
  const { pid, baseUrl, redisUrl, cleanup } = await startServer(store);
  const tally = new Tally();
  const topics = topicNames(TOPICS, 'lg');
  const groups: string[][] = [];
  for (let i = 0; i < topics.length; i += TOPICS_PER_CONN) groups.push(topics.slice(i, i + TOPICS_PER_CONN));
  const subscribers = groups.map((group) => new BenchSubscriber({ baseUrl, topics: group, transport: TRANSPORT, tally }));
  try {
    const connectStart = performance.now();
    await withConcurrency(subscribers, CONNECT_CONCURRENCY, (s) => s.open().catch(() => undefined));
    console.log(
      `[${store}] ${subscribers.length} ${TRANSPORT} connections for ${topics.length} topics open in ${((performance.now() - connectStart) / 1000).toFixed(1)} s`,
    );

    let peakRss = sampleProcess(pid).rssBytes;
    let publishStart = performance.now();
    let lastDelivered = 0;
    const ticker = setInterval(() => {
      const sample = sampleProcess(pid);
      peakRss = Math.max(peakRss, sample.rssBytes);
      const delivered = tally.delivered;
      const phase = performance.now() - publishStart < WARMUP_MS ? ' (warm-up)' : '';
      console.log(
        `[${store}] delivered/s ${delivered - lastDelivered}  total ${delivered}  p99 so far ${formatUs(tally.latency.percentileUs(0.99))}  rss ${(sample.rssBytes / MIB).toFixed(0)} MiB${phase}`,
      );
      lastDelivered = delivered;
    }, 1000);
    const reconnectTimer =
      RECONNECTS > 0
        ? setTimeout(
            () => {
              for (const subscriber of subscribers.slice(0, RECONNECTS)) subscriber.reconnect().catch(() => (tally.connectErrors += 1));
            },
            WARMUP_MS + DURATION_MS / 2,
          )
        : undefined;

    const clientLag = monitorEventLoopDelay({ resolution: 10 });
    const totals = newPublishTotals();
    // Latency counts from the end of the warm-up, by send time; so do rates and CPU.
    tally.measureFromUs = nowUs() + WARMUP_MS * 1000;
    let measureStart: Promise<Usage> = usageNow(pid, redisUrl, 0);
    const warmupTimer = setTimeout(() => {
      measureStart = usageNow(pid, redisUrl, totals.completed);
      clientLag.enable();
    }, WARMUP_MS);
    publishStart = performance.now();
    await runPublishers(
      { baseUrl, topics, rate: RATE, durationMs: WARMUP_MS + DURATION_MS, paddingBytes: PAYLOAD_BYTES, sockets: PUBLISH_SOCKETS },
      totals,
    );
    const measureEnd = await usageNow(pid, redisUrl, totals.completed);
    clearTimeout(warmupTimer);
    const start = await measureStart;
    const sent = [...totals.sent.values()].reduce((a, b) => a + b, 0);
    const drained = await waitUntil(() => tally.delivered + tally.gaps >= sent, GRACE_MS);
    clearInterval(ticker);
    clearTimeout(reconnectTimer);
    clientLag.disable();
    const serverLagMax = await serverMetric(baseUrl, 'nodejs_eventloop_lag_max_seconds');

    const loss = sent - tally.delivered;
    const pass =
      loss === 0 &&
      tally.gaps === 0 &&
      tally.reorderedOrDuplicate === 0 &&
      totals.errors === 0 &&
      tally.connectErrors === 0 &&
      tally.readErrors === 0;
    const measuredSecs = (measureEnd.atMs - start.atMs) / 1000;
    const measured = measureEnd.published - start.published;
    const serverCpuMs = measureEnd.server.cpuMs - start.server.cpuMs;
    const serverSystemMs = measureEnd.server.systemMs - start.server.systemMs;
    const perMessageUs = (ms: number) => ((1000 * ms) / Math.max(1, measured)).toFixed(0);
    const percentOfCore = (ms: number) => ((100 * ms) / (measuredSecs * 1000)).toFixed(0);
    console.log(
      `\n[${store}] ntfy load: ${topics.length} topics, ${subscribers.length} ${TRANSPORT} connections, target ${RATE}/s for ${DURATION_MS / 1000} s after a ${WARMUP_MS / 1000} s warm-up, ${PAYLOAD_BYTES} B padding, ${RECONNECTS} reconnects`,
    );
    console.log(
      `[${store}] measured: published ${measured} in ${measuredSecs.toFixed(1)} s = ${(measured / measuredSecs).toFixed(0)}/s; whole run ${sent} (late slots ${totals.late}, errors ${totals.errors})`,
    );
    console.log(
      `[${store}] delivered ${tally.delivered}${drained ? '' : ' (grace period ran out)'}; RSS peak ${(peakRss / MIB).toFixed(0)} MiB`,
    );
    console.log(
      `[${store}] CPU (measured): server ${percentOfCore(serverCpuMs)} % of one core = ${perMessageUs(serverCpuMs)} µs/message (${perMessageUs(serverSystemMs)} in the kernel); load generator ${percentOfCore(measureEnd.clientCpuMs - start.clientCpuMs)} % = ${perMessageUs(measureEnd.clientCpuMs - start.clientCpuMs)} µs/message${redisUrl ? `; redis-server ${percentOfCore(measureEnd.redisCpuMs - start.redisCpuMs)} % = ${perMessageUs(measureEnd.redisCpuMs - start.redisCpuMs)} µs/message` : ''}`,
    );
    const l = tally.latency;
    console.log(
      `[${store}] latency p50 ${formatUs(l.percentileUs(0.5))}  p90 ${formatUs(l.percentileUs(0.9))}  p95 ${formatUs(l.percentileUs(0.95))}  p99 ${formatUs(l.percentileUs(0.99))}  max ${formatUs(l.max)}`,
    );
    const w = tally.warmupLatency;
    if (w.count > 0)
      console.log(
        `[${store}] warm-up latency (${w.count} messages): p50 ${formatUs(w.percentileUs(0.5))}  p99 ${formatUs(w.percentileUs(0.99))}  max ${formatUs(w.max)}`,
      );
    console.log(
      `[${store}] event-loop delay: load generator p99 ${formatUs(clientLag.percentile(99) / 1000)} max ${formatUs(clientLag.max / 1000)}; server max ${formatUs(serverLagMax * 1e6)} (since its start)`,
    );
    console.log(
      `[${store}] VERDICT ${pass ? 'PASS' : 'FAIL'}: loss ${loss}, reordered/duplicate ${tally.reorderedOrDuplicate}, gaps ${tally.gaps}, publish errors ${totals.errors}, connect errors ${tally.connectErrors}, read errors ${tally.readErrors}`,
    );
    return pass;
  } finally {
    for (const subscriber of subscribers) subscriber.stop();
    await cleanup();
  }
}

async function runIdle(store: 'sqlite' | 'redis'): Promise<boolean> {
  const { pid, baseUrl, cleanup } = await startServer(store);
  const tally = new Tally();
  const subscribers = topicNames(IDLE_SUBS, 'idle').map(
    (topic) => new BenchSubscriber({ baseUrl, topics: [topic], transport: TRANSPORT, tally }),
  );
  try {
    const before = sampleProcess(pid);
    const heapBefore = await heapOf(baseUrl);
    const start = performance.now();
    let opened = 0;
    await withConcurrency(subscribers, CONNECT_CONCURRENCY * 2, async (s) => {
      await s
        .open()
        .then(() => (opened += 1))
        .catch(() => undefined);
    });
    const connectSecs = (performance.now() - start) / 1000;
    // Let the server settle (GC, buffers) before reading its memory.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const held = sampleProcess(pid);
    const heapHeld = await heapOf(baseUrl);
    const perConnKb = (held.rssBytes - before.rssBytes) / Math.max(1, opened) / 1024;
    console.log(`\n[${store}] ntfy idle: ${opened}/${IDLE_SUBS} ${TRANSPORT} subscriptions open in ${connectSecs.toFixed(1)} s`);
    console.log(
      `[${store}] server RSS ${(before.rssBytes / MIB).toFixed(0)} MiB before, ${(held.rssBytes / MIB).toFixed(0)} MiB holding them (${perConnKb.toFixed(1)} KiB each)`,
    );
    console.log(
      `[${store}] server V8 heap ${(heapBefore.heapBytes / MIB).toFixed(0)} → ${(heapHeld.heapBytes / MIB).toFixed(0)} MiB (${((heapHeld.heapBytes - heapBefore.heapBytes) / Math.max(1, opened) / 1024).toFixed(1)} KiB each), external ${(heapBefore.externalBytes / MIB).toFixed(0)} → ${(heapHeld.externalBytes / MIB).toFixed(0)} MiB`,
    );
    const pass = opened === IDLE_SUBS && tally.connectErrors === 0;
    console.log(
      `[${store}] VERDICT ${pass ? 'PASS' : 'FAIL'}: opened ${opened}, connect errors ${tally.connectErrors}, RSS ${(held.rssBytes / MIB).toFixed(0)} MiB`,
    );
    return pass;
  } finally {
    for (const subscriber of subscribers) subscriber.stop();
    await cleanup();
  }
}

const stores = values.store === 'both' ? (['sqlite', 'redis'] as const) : ([values.store === 'redis' ? 'redis' : 'sqlite'] as const);
let allPassed = true;
for (const websocket of WEBSOCKETS) {
  websocketServer = websocket;
  console.log(`\nntfy.websocket: ${websocket}`);
  for (const store of stores) {
    const passed = values.mode === 'idle' ? await runIdle(store) : await runLoad(store);
    allPassed &&= passed;
  }
}
process.exit(allPassed ? 0 : 1);
