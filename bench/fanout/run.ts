/**
 * bench/fanout: one creator with N watchers (default 100,000), each with one FCM token, and one
 * new video. The video's fan-out job is queued as the engine queues it, the scheduler's
 * `new_post_fanout` worker (one, as one scheduler process runs it) walks the watcher pages and
 * claims and queues every bell on the outbound queue, and the delivery stage (the real queue
 * worker and `handleOutbound`, as the delivery role runs them) sends them over HTTP/2 into the FCM
 * fake (in its own process, 20 ms answer latency). Prints pushes per second from the queueing of
 * the fan-out job to the last push settled, and the verdict: every watcher pushed exactly once.
 *
 *   node --import tsx bench/fanout/run.ts [--watchers 100000] [--store sqlite|redis|layout|cluster|both|all] [--latency 20]
 *                                         [--page-size 1000] [--concurrency 400] [--wiring role|minimal]
 *
 * Page size defaults to `service.new_post_fanout_page_size`, concurrency to the delivery stage's
 * `DELIVERY_CONCURRENCY` (sends in flight; its window holds twice that). With 20 ms per FCM answer
 * the delivery stage cannot exceed concurrency / 20 ms pushes per second whatever the store does.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultConfig } from '../../src/config/defaults.ts';
import { createFcmTransport } from '../../src/delivery/fcm/sender.ts';
import { storeOutboundQueue } from '../../src/engine/outbound-queue.ts';
import { handleOutbound, type OutboundHandlerDeps } from '../../src/delivery/outbound.ts';
import { batchedBellBookkeeping, batchedTokenActivity } from '../../src/delivery/deliver.ts';
import { runQueueWorker } from '../../src/roles/queue-worker.ts';
import { DELIVERY_CONCURRENCY, deliveryDepsOf } from '../../src/roles/roles.ts';
import { runNewPostFanout, type NewPostFanoutDeps } from '../../src/engine/bells/fanout-worker.ts';
import { enqueueNewPostFanout } from '../../src/engine/bells/video.ts';
import { bellNotificationExpander } from '../../src/engine/bells/bell-items.ts';
import type { OutboundPayload } from '../../src/delivery/campaign-items.ts';
import { signEvent, generateSecretKey, publicKeyOf } from '../../src/nostr/keys.ts';
import { VIDEO } from '../../src/nostr/kinds.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import type { DeviceRegistration, StorePort } from '../../src/store/port.ts';
import type { PushTransport, SendOutcome } from '../../src/delivery/types.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { startRedisServer } from '../../test/support/redis-server.ts';
import { startRedisCluster } from '../../test/support/redis-cluster.ts';
import { printProfile, profile } from '../support/cpu-profile.ts';
import { startFcmFakeProcess } from '../support/fcm-fake-client.ts';
import type { PushMessage } from '../../src/notification/types.ts';
import { QueueSignal } from '../../src/store/queue-work.ts';
import { commandsPerItem, redisCommandCounts } from '../support/redis-commands.ts';
import { http2LimitPerSec } from '../support/http2-limit.ts';
import { runUnderServerNodeFlags } from '../support/server-node-flags.ts';
import { semiSpaceMibInForce } from '../../src/util/heap-growth.ts';

const defaults = defaultConfig().service;
runUnderServerNodeFlags();
const { values } = parseArgs({
  options: {
    watchers: { type: 'string', default: '100000' },
    store: { type: 'string', default: 'both' },
    latency: { type: 'string', default: '20' },
    'page-size': { type: 'string', default: String(defaults.new_post_fanout_page_size) },
    concurrency: { type: 'string', default: String(DELIVERY_CONCURRENCY) },
    transport: { type: 'string', default: 'fcm' },
    wiring: { type: 'string', default: 'role' },
  },
});
/**
 * `fcm` (default): the real FCM transport over HTTP/2 into the fake. `stub`: an in-process
 * transport answering every send after the latency, to measure what the fan-out itself costs.
 */
const TRANSPORT = values.transport;
/**
 * `role` (default): the delivery stage's dependencies built by the delivery role's own
 * `deliveryDepsOf` (delivery log, gates, copywriter, batched badges), so a push costs what it costs
 * the service. `minimal`: the wiring of figures taken before 2026-12-06 (no delivery log, gates or
 * copywriter; a badge read per push), for comparisons with them.
 */
const WIRING = values.wiring;
if (WIRING !== 'role' && WIRING !== 'minimal') {
  console.error(`--wiring takes role or minimal, not ${WIRING}`);
  process.exit(2);
}
const WATCHERS = Number(values.watchers);
const PAGE_SIZE = Number(values['page-size']);
const CONCURRENCY = Number(values.concurrency);
const SEED_BATCH = 500;
const POLL_MS = 50;

/** Script calls by name, counted by the Redis store's observer: which scripts the commands per push are. */
const scriptCalls = new Map<string, number>();
const countScriptCall = (name: string): void => void scriptCalls.set(name, (scriptCalls.get(name) ?? 0) + 1);
function scriptCallsPerPush(before: ReadonlyMap<string, number>): string {
  return [...scriptCalls]
    .map(([name, calls]) => [name, calls - (before.get(name) ?? 0)] as const)
    .filter(([, calls]) => calls > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([name, calls]) => `${name} ${(calls / WATCHERS).toFixed(3)}`)
    .join(', ');
}

/** Answers every send with success after `latencyMs`, recording it as the fake would. */
class StubTransport implements PushTransport {
  readonly received: Array<[string, string, number]> = [];
  peak = 0;
  private active = 0;
  constructor(private readonly latencyMs: number) {}
  handles(): boolean {
    return true;
  }
  async sendBatch(devices: DeviceRegistration[], message: PushMessage): Promise<Map<string, SendOutcome>> {
    this.peak = Math.max(this.peak, ++this.active);
    await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    this.active--;
    const results = new Map<string, SendOutcome>();
    for (const device of devices) {
      this.received.push([message.data.eventId ?? '', device.token, Date.now()]);
      results.set(device.token, { ok: true });
    }
    return results;
  }
  async close(): Promise<void> {}
}

const watcherPubkey = (i: number): string => `${i.toString(16).padStart(12, '0')}${'b'.repeat(52)}`;
const tokenOf = (i: number): string => `bench-${i}`;

async function seed(store: StorePort, creator: string): Promise<number> {
  const started = performance.now();
  const nowSecs = Math.floor(store.clock.nowMs() / 1000);
  for (let i = 0; i < WATCHERS; i += SEED_BATCH) {
    const batch = Array.from({ length: Math.min(SEED_BATCH, WATCHERS - i) }, (_, j) => i + j);
    await Promise.all(
      batch.map(async (n) => {
        const pubkey = watcherPubkey(n);
        await store.registerToken(pubkey, { token: tokenOf(n), transport: 'fcm' });
        await store.replaceNotifySubscriptions({ subscriber: pubkey, creators: [creator], createdAt: nowSecs, eventId: 'ab'.repeat(32) });
      }),
    );
  }
  return performance.now() - started;
}

/** CPU time of a process so far (ms), from /proc (Linux). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * 10;
}

function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

async function runOne(
  label: string,
  store: StorePort,
  dir: string,
  redisPids: readonly number[] = [],
  redisPorts: readonly number[] = [],
): Promise<void> {
  const logger = createLogger({ level: 'silent' });
  const metrics = new Metrics();
  const creatorSecret = generateSecretKey();
  const creator = publicKeyOf(creatorSecret);
  const seedMs = await seed(store, creator);
  await store.cacheProfile({ pubkey: creator, name: 'bench creator' }, 3600);

  const fake = await startFcmFakeProcess(Number(values.latency), dir);
  const transport =
    TRANSPORT === 'stub'
      ? new StubTransport(Number(values.latency))
      : createFcmTransport({ projectId: 'fake-project', credentialsPath: fake.credentialsPath, apiBaseUrl: fake.baseUrl, logger, metrics });
  if (!transport) throw new Error('no FCM transport');
  const leaseSecs = defaults.new_post_fanout_lease_secs;
  const wake = new QueueSignal();
  const deps: NewPostFanoutDeps = {
    store,
    outbound: storeOutboundQueue(store, () => wake.notify('outbound')),
    profiles: { displayName: async () => 'bench creator' },
    allowedPubkeys: new Set(),
    defaultPreferenceKinds: [1, 7, 16, 1059, 30023, 34236],
    processedEventTtlSecs: defaults.processed_event_ttl_secs,
    rateLimitSecs: defaults.new_post_rate_limit_secs,
    videoRecordTtlSecs: defaults.video_coordinate_dedup_ttl_secs,
    pageSize: PAGE_SIZE,
    leaseSecs,
    retrySecs: defaults.new_post_fanout_retry_secs,
    pollMs: 5,
    logger,
    metrics,
  };
  const video = signEvent(
    {
      kind: VIDEO,
      created_at: Math.floor(store.clock.nowMs() / 1000),
      tags: [
        ['d', 'bench-vine'],
        ['title', 'bench'],
      ],
      content: '',
    },
    creatorSecret,
  );
  const controller = new AbortController();

  const redisCpuMs = () => redisPids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
  const commandsBefore = await redisCommandCounts(redisPorts);
  const scriptsBefore = new Map(scriptCalls);
  const cpuBefore = { self: ownCpuMs(), fake: processCpuMs(fake.pid), redis: redisCpuMs() };
  const {
    result: { elapsed: elapsedMs, queuedAllMs },
    top,
  } = await profile(async () => {
    const started = performance.now();
    await enqueueNewPostFanout(
      { store, processedEventTtlSecs: defaults.processed_event_ttl_secs, maxEventAgeSecs: 3600, clock: store.clock, logger },
      video,
    );
    const worker = runNewPostFanout(deps, controller.signal);
    const deliveryDeps: OutboundHandlerDeps =
      WIRING === 'role'
        ? { ...deliveryDepsOf({ config: defaultConfig(), store, transports: [transport], metrics }, logger), maxEventAgeSecs: 3600 }
        : {
            store,
            transports: [transport],
            videoRecordTtlSecs: defaults.video_coordinate_dedup_ttl_secs,
            maxEventAgeSecs: 3600,
            logger,
            metrics,
            refreshTokenActivity: batchedTokenActivity(store),
            recordDeliveredBell: batchedBellBookkeeping(store, {
              claimTtlSecs: defaults.processed_event_ttl_secs,
              videoRecordTtlSecs: defaults.video_coordinate_dedup_ttl_secs,
            }),
            expandBellItem: bellNotificationExpander(),
          };
    // Items handled (any outcome): the drain's own signal, so the benchmark never scans the queue
    // while the stages work (queueStats counts every row, 30 ms for 30,000 rows on SQLite).
    let handled = 0;
    let queuedAllMs: number | undefined;
    const delivery = runQueueWorker<OutboundPayload>({
      store,
      queue: 'outbound',
      handle: async (item) => {
        try {
          return await handleOutbound(deliveryDeps, item, controller.signal);
        } finally {
          handled++;
        }
      },
      leaseMs: 60_000,
      maxAttempts: 10,
      batchSize: 2 * CONCURRENCY,
      concurrency: CONCURRENCY,
      pollMs: POLL_MS,
      signal: controller.signal,
      wake,
      logger,
      metrics,
    });
    for (;;) {
      const jobs = await store.fanoutJobStats();
      // When the fan-out job has queued its last page: whether the producer or the delivery side bounds the rate.
      if (jobs.due === 0 && jobs.waiting === 0 && queuedAllMs === undefined) queuedAllMs = performance.now() - started;
      if (jobs.due === 0 && jobs.waiting === 0 && handled >= WATCHERS) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    // Then the queue itself confirms nothing is left (a retried item is handled twice).
    for (;;) {
      const outbound = await store.queueStats('outbound');
      if (outbound.ready === 0 && outbound.leased === 0) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const elapsed = performance.now() - started;
    controller.abort();
    await Promise.all([worker, delivery]);
    return { elapsed, queuedAllMs: queuedAllMs ?? elapsed };
  });

  const commandsLine =
    redisPorts.length > 0
      ? `  Redis: ${commandsPerItem(commandsBefore, await redisCommandCounts(redisPorts), WATCHERS)}\n  scripts per push: ${scriptCallsPerPush(scriptsBefore)}`
      : '';
  const cpuPerPush = (ms: number) => ((ms * 1000) / WATCHERS).toFixed(0);
  const cpuLine =
    `  CPU per push: this process ${cpuPerPush(ownCpuMs() - cpuBefore.self)} µs, FCM fake ${cpuPerPush(processCpuMs(fake.pid) - cpuBefore.fake)} µs` +
    (redisPids.length > 0
      ? `, redis-server ${cpuPerPush(redisCpuMs() - cpuBefore.redis)} µs${redisPids.length > 1 ? ` (${redisPids.length} nodes)` : ''}`
      : '');
  // Measured right after the run (its CPU read above), on the same machine in the same minute.
  const http2Limit = await http2LimitPerSec();
  const { received, peakStreams } =
    transport instanceof StubTransport ? { received: transport.received, peakStreams: transport.peak } : await fake.report();
  const counts = new Map<string, number>();
  for (const [eventId, token] of received) if (eventId === video.id) counts.set(token, (counts.get(token) ?? 0) + 1);
  let missing = 0;
  let duplicated = 0;
  for (let i = 0; i < WATCHERS; i++) {
    const n = counts.get(tokenOf(i)) ?? 0;
    if (n === 0) missing++;
    else if (n > 1) duplicated++;
  }
  const pushes = [...counts.values()].reduce((a, b) => a + b, 0);
  const verdict =
    missing === 0 && duplicated === 0
      ? 'every watcher pushed exactly once'
      : `FAILED: ${missing} watchers missed, ${duplicated} pushed more than once`;
  console.log(
    `\n${label}: ${WATCHERS} watchers, page ${PAGE_SIZE}, concurrency ${CONCURRENCY}, ${TRANSPORT === 'stub' ? 'stub transport' : 'FCM fake'}, latency ${values.latency} ms, ${WIRING} wiring, V8 semi-space ${semiSpaceMibInForce() ?? 'default'} MiB`,
  );
  console.log(`  seeding (tokens + notify lists): ${(seedMs / 1000).toFixed(1)} s`);
  const pushesPerSec = pushes / (elapsedMs / 1000);
  console.log(
    `  fan-out: ${pushes} pushes in ${(elapsedMs / 1000).toFixed(2)} s = ${Math.round(pushesPerSec)} pushes/s (peak ${peakStreams} concurrent FCM streams)`,
  );
  console.log(
    `  HTTP/2 limit beside it: ${Math.round(http2Limit)} requests/s (bench/support/http2-limit.ts); pushes/s ÷ limit = ${(pushesPerSec / http2Limit).toFixed(2)} (target 0.6, issue 39)`,
  );
  console.log(`  the fan-out job had queued every watcher after ${(queuedAllMs / 1000).toFixed(2)} s`);
  console.log(cpuLine);
  if (commandsLine) console.log(commandsLine);
  console.log(`  ${verdict}`);
  if (process.env.BENCH_PROFILE) printProfile(label, top);
  await transport.close();
  await fake.stop();
}

const stores = values.store === 'both' ? ['sqlite', 'redis'] : values.store === 'all' ? ['sqlite', 'redis', 'cluster'] : [values.store];
for (const kind of stores) {
  const dir = mkdtempSync(join(tmpdir(), 'np-bench-fanout-'));
  try {
    if (kind === 'sqlite') {
      const store = await openSqliteStore({ path: join(dir, 'bench.sqlite') });
      try {
        await runOne('SQLite', store, dir);
      } finally {
        await store.close();
      }
    } else if (kind === 'cluster') {
      // Three masters on this machine, the cluster key layout (issue 18): the cost of the layout.
      const cluster = await startRedisCluster({ masters: 3 });
      const store = await openRedisStore({ url: cluster.url, scriptObserver: countScriptCall });
      try {
        await runOne(
          'Redis Cluster (3 masters)',
          store,
          dir,
          cluster.nodes.map((node) => node.pid),
          cluster.nodes.map((node) => node.port),
        );
      } finally {
        await store.close();
        await cluster.stop();
      }
    } else {
      // `layout`: one Redis with the cluster key layout, the layout's cost without a cluster's.
      const server = await startRedisServer();
      const store = await openRedisStore({
        url: server.url,
        scriptObserver: countScriptCall,
        ...(kind === 'layout' ? { layout: 'cluster' as const } : {}),
      });
      try {
        await runOne(kind === 'layout' ? 'Redis, cluster layout' : 'Redis', store, dir, [server.pid], [server.port]);
      } finally {
        await store.close();
        await server.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
