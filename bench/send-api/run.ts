/**
 * bench/send-api: app servers calling `POST /v1/notifications` against the real binary (roles
 * api, scheduler, delivery), FCM fake in its own process at 20 ms per answer.
 *
 * Warm-up: `--warmup` seconds of requests at `--rate`, each to `WARMUP_RECIPIENTS` recipients, not
 * measured: a fresh process answers its first ~150 requests 10–100× slower (module compilation,
 * JIT, first statements), which a 3 s phase would otherwise report as its p99; the small requests
 * warm every code path without piling up a push backlog ahead of phase 1.
 * Phase 1, throughput: `--rate` requests per second for `--seconds`, each to `--recipients`
 * recipients (one FCM token each), priority normal. Prints accepted requests/s, the API's p50/p99
 * answer time, pushes/s from the first request to the last push, and the verdict: every
 * (notification, recipient) pushed exactly once.
 * Phase 2, a critical send behind a low backlog: `--backlog` low-priority pushes requested at once
 * (in requests of `--recipients`), then `--criticals` critical sends to one recipient, 200 ms
 * apart; prints each critical's request-to-push time (p50/p99/max). Without priority lanes in the
 * outbound queue a critical waits behind the whole backlog; with them it should not.
 *
 *   node --import tsx bench/send-api/run.ts [--store sqlite|redis|both] [--rate 100] [--recipients 1000]
 *        [--seconds 3] [--backlog 100000] [--criticals 10] [--latency 20] [--split] [--warmup 2] [--worker-nice 0]
 *
 * --split (Redis only: a SQLite store belongs to one process) runs the roles as a fleet does:
 * `api` in one process, `scheduler,delivery` in another, so the API's answers do not wait behind
 * the delivery's turns on one event loop. --worker-nice N starts that second process at nice N, as
 * an operator sharing one box between an api process and workers would (docs/scaling.md): the
 * kernel then runs the API's requests before the backlog's pushes.
 *
 * --limits on,off,on,off (default on) runs the whole bench once per entry, in that order, with the
 * per-client rate limits on (the defaults) or off (`rate_limits.enabled: false`): the pairs of
 * issue 35 (docs/benchmarks.md), alternated so a slow minute of a shared host hits both sides.
 *
 * Every NOSTR_PUSH__* variable of the bench's environment is passed to the service processes, over
 * the bench's own settings: a setting to try is one variable away.
 *
 * The issue's target run is --rate 100 --recipients 1000 --backlog 100000 (100,000 pushes/s
 * offered): far past what one delivery process pushes on a 2-core machine, so the backlog grows
 * and phase 1's pushes/s is the service's delivery rate.
 */
import { parseArgs } from 'node:util';
import { setPriority } from 'node:os';
import { generateSecretKey } from '../../src/nostr/keys.ts';
import { createApiKey } from '../../src/platform/api-keys.ts';
import type { StorePort } from '../../src/store/port.ts';
import { forEachBenchStore } from '../support/stores.ts';
import { startServiceProcess } from '../../test/support/service-process.ts';
import { serviceProfileNodeArgs } from '../support/cpu-profile.ts';
import { startFcmFakeProcess, type FcmFakeProcess } from '../support/fcm-fake-client.ts';
import { hostSpeedProbeMs } from '../support/host-speed.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'both' },
    rate: { type: 'string', default: '100' },
    recipients: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '3' },
    backlog: { type: 'string', default: '100000' },
    criticals: { type: 'string', default: '10' },
    latency: { type: 'string', default: '20' },
    split: { type: 'boolean', default: false },
    warmup: { type: 'string', default: '2' },
    'worker-nice': { type: 'string', default: '0' },
    limits: { type: 'string', default: 'on' },
  },
});
const LIMITS_ORDER = values.limits.split(',').map((entry) => entry.trim());
if (LIMITS_ORDER.some((entry) => entry !== 'on' && entry !== 'off')) {
  console.error(`--limits takes on and off, comma-separated (e.g. on,off,on,off), not ${values.limits}`);
  process.exit(2);
}
const RATE = Number(values.rate);
const RECIPIENTS = Number(values.recipients);
const SECONDS = Number(values.seconds);
const BACKLOG = Number(values.backlog);
const CRITICALS = Number(values.criticals);
const WARMUP_SECS = Number(values.warmup);
const WORKER_NICE = Number(values['worker-nice']);
/** Recipients of a warm-up request: enough to run every path, few enough to leave no backlog. */
const WARMUP_RECIPIENTS = 10;
/** Recipients registered; each request takes a window of RECIPIENTS of them. */
const POOL = Math.max(RECIPIENTS * 4, 4000);
const SEED_BATCH = 500;
const CRITICAL_GAP_MS = 200;
/** How long to wait for the last push before calling the run incomplete. */
const DRAIN_LIMIT_MS = 600_000;

const recipientOf = (i: number): string => `${i.toString(16).padStart(12, '0')}${'c'.repeat(52)}`;
const CRITICAL_RECIPIENT = 'd'.repeat(64);

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function seed(store: StorePort): Promise<void> {
  for (let i = 0; i < POOL; i += SEED_BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(SEED_BATCH, POOL - i) }, (_, j) =>
        store.registerToken(recipientOf(i + j), { token: `tok-${i + j}`, transport: 'fcm' }),
      ),
    );
  }
  await store.registerToken(CRITICAL_RECIPIENT, { token: 'critical-phone', transport: 'fcm' });
}

async function waitForPushes(
  fake: FcmFakeProcess,
  count: (received: Array<[string, string, number]>) => boolean,
): Promise<Array<[string, string, number]>> {
  const deadline = Date.now() + DRAIN_LIMIT_MS;
  for (;;) {
    const { received } = await fake.report();
    if (count(received) || Date.now() > deadline) return received;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function runOne(label: string, limitsOn: boolean, storeUrl: string, open: () => Promise<StorePort>, dir: string): Promise<void> {
  const probeBeforeMs = hostSpeedProbeMs();
  const store = await open();
  await seed(store);
  const key = (await createApiKey(store, 'default', 'send')).key;
  await store.close();
  const fake = await startFcmFakeProcess(Number(values.latency), dir);
  const split = values.split && !storeUrl.startsWith('sqlite:');
  if (values.split && !split) console.error(`${label}: --split needs Redis (a SQLite store belongs to one process); one process`);
  const serviceEnv = (roles: string, name: string): Record<string, string> => ({
    NOSTR_PUSH__ROLES: roles,
    NOSTR_PUSH__STORE__URL: storeUrl,
    NOSTR_PUSH__DATA_DIR: `${dir}/${name}`,
    NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKeyHex,
    NOSTR_PUSH__SEND_API__TYPES: 'bench:1059',
    NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fake.credentialsPath,
    NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
    NOSTR_PUSH__FIREBASE__API_BASE_URL: fake.baseUrl,
    NOSTR_PUSH__NOTIFICATION__MAX_EVENT_AGE_SECS: '86400',
    NOSTR_PUSH__RATE_LIMITS__ENABLED: limitsOn ? 'true' : 'false',
    // info: startServiceProcess waits for the 'http listening' line.
    NOSTR_PUSH__LOG__LEVEL: 'info',
    LOG_LEVEL: 'info',
    // Settings to try (`NOSTR_PUSH__SEND_API__PAGE_SIZE=200 node … run.ts`) override the bench's own.
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('NOSTR_PUSH__'))),
  });
  const serviceKeyHex = generateSecretKey();
  // The delivery side of a split fleet: no HTTP wait (its api role is off).
  const worker = split ? await startServiceProcess({ env: serviceEnv('scheduler,delivery', 'work'), waitForHttp: false }) : null;
  // As `nice -n N nostr-push serve` (systemd `Nice=N`) would: the box's API answers before its pushes.
  if (worker && WORKER_NICE !== 0) setPriority(worker.child.pid ?? 0, WORKER_NICE);
  const service = await startServiceProcess({
    nodeArgs: serviceProfileNodeArgs(),
    env: split ? serviceEnv('api', 'edge') : serviceEnv('api,scheduler,delivery', 'one'),
  });
  if (split) console.error(`${label}: split fleet, api in one process, scheduler and delivery in another`);
  // A stopped benchmark (timeout, Ctrl-C) must not leave the service or the fake behind.
  const onSignal = () => {
    void Promise.allSettled([service.kill(), worker?.kill(), fake.stop()]).then(() => process.exit(130));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  console.error(`${label}: service up, ${POOL} recipients seeded`);
  const post = async (tag: string, recipients: string[], priority: string): Promise<number> => {
    const started = performance.now();
    const res = await fetch(`${service.baseUrl}/v1/notifications`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipients, type: 'bench', title: 'bench', body: tag, priority, data: { eventId: tag } }),
    });
    await res.arrayBuffer();
    if (res.status !== 202) throw new Error(`POST answered ${res.status}`);
    return performance.now() - started;
  };
  /** The api process's event-loop delay since the last read (prom-client resets its histogram on each scrape). */
  const apiLoopDelay = async (): Promise<string> => {
    const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
    const seconds = (name: string) => Number(/^(\S+) (\S+)$/m.exec(text.split('\n').find((l) => l.startsWith(`${name} `)) ?? '')?.[2]);
    return `p99 ${(seconds('nodejs_eventloop_lag_p99_seconds') * 1000).toFixed(0)} ms, max ${(seconds('nodejs_eventloop_lag_max_seconds') * 1000).toFixed(0)} ms`;
  };
  try {
    if (WARMUP_SECS > 0) {
      const warmups: Array<Promise<number>> = [];
      const w0 = Date.now();
      for (let i = 0; i < RATE * WARMUP_SECS; i++) {
        const wait = w0 + (i * 1000) / RATE - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const first = (i * WARMUP_RECIPIENTS) % POOL;
        const recipients = Array.from({ length: WARMUP_RECIPIENTS }, (_, j) => recipientOf((first + j) % POOL));
        warmups.push(post(`wu-${i}`, recipients, 'normal'));
      }
      await Promise.all(warmups);
      const expected = warmups.length * WARMUP_RECIPIENTS;
      await waitForPushes(fake, (r) => r.filter(([id]) => id.startsWith('wu-')).length >= expected);
      console.error(`${label}: warmed up (${warmups.length} requests of ${WARMUP_RECIPIENTS}, pushed)`);
    }
    await apiLoopDelay();
    // Phase 1: a steady rate of requests.
    const requests = RATE * SECONDS;
    const latencies: number[] = [];
    const t0 = Date.now();
    const inflight: Array<Promise<void>> = [];
    for (let i = 0; i < requests; i++) {
      const due = t0 + (i * 1000) / RATE;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const first = (i * RECIPIENTS) % POOL;
      const recipients = Array.from({ length: RECIPIENTS }, (_, j) => recipientOf((first + j) % POOL));
      inflight.push(post(`tp-${i}`, recipients, 'normal').then((ms) => void latencies.push(ms)));
    }
    await Promise.all(inflight);
    const acceptedSecs = (Date.now() - t0) / 1000;
    console.error(`${label}: api process event-loop delay while accepting: ${await apiLoopDelay()}`);
    const expected = requests * RECIPIENTS;
    console.error(`${label}: ${requests} requests accepted, waiting for ${expected} pushes`);
    const received = await waitForPushes(fake, (r) => r.filter(([id]) => id.startsWith('tp-')).length >= expected);
    const pushes = received.filter(([id]) => id.startsWith('tp-'));
    // A loop, not Math.max(...): a spread of 100,000+ arguments overflows the stack.
    const lastMs = pushes.reduce((latest, [, , at]) => Math.max(latest, at), -Infinity);
    const distinct = new Set(pushes.map(([id, token]) => `${id}\n${token}`)).size;
    latencies.sort((a, b) => a - b);
    console.log(
      `${label} phase 1: ${requests} requests x ${RECIPIENTS} recipients at ${RATE}/s offered — accepted ${(requests / acceptedSecs).toFixed(1)} requests/s, ` +
        `API p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms; ` +
        `${pushes.length} pushes in ${((lastMs - t0) / 1000).toFixed(1)} s = ${((pushes.length * 1000) / (lastMs - t0)).toFixed(0)} pushes/s; ` +
        `host speed probe ${probeBeforeMs.toFixed(0)} ms before, ${hostSpeedProbeMs().toFixed(0)} ms after; ` +
        `verdict: ${distinct === expected && pushes.length === expected ? 'every recipient pushed exactly once' : `WRONG: ${pushes.length} pushes, ${distinct} distinct, ${expected} expected`}`,
    );

    // Phase 2: a low backlog, then critical sends.
    const lowRequests = Math.ceil(BACKLOG / RECIPIENTS);
    await Promise.all(
      Array.from({ length: lowRequests }, (_, i) => {
        const first = (i * RECIPIENTS) % POOL;
        return post(
          `low-${i}`,
          Array.from({ length: RECIPIENTS }, (_, j) => recipientOf((first + j) % POOL)),
          'low',
        );
      }),
    );
    const sentAt = new Map<string, number>();
    for (let i = 0; i < CRITICALS; i++) {
      sentAt.set(`crit-${i}`, Date.now());
      await post(`crit-${i}`, [CRITICAL_RECIPIENT], 'critical');
      await new Promise((resolve) => setTimeout(resolve, CRITICAL_GAP_MS));
    }
    const after = await waitForPushes(fake, (r) => r.filter(([id]) => id.startsWith('crit-')).length >= CRITICALS);
    const criticalMs = after
      .filter(([id]) => id.startsWith('crit-'))
      .map(([id, , at]) => at - (sentAt.get(id) ?? at))
      .sort((a, b) => a - b);
    const lowDone = after.filter(([id]) => id.startsWith('low-')).length;
    console.log(
      `${label} phase 2: ${lowRequests * RECIPIENTS} low pushes requested, then ${CRITICALS} critical sends — critical request-to-push ` +
        `p50 ${percentile(criticalMs, 50).toFixed(0)} ms, p99 ${percentile(criticalMs, 99).toFixed(0)} ms, max ${percentile(criticalMs, 100).toFixed(0)} ms; ` +
        `low pushes done when the last critical landed: ${lowDone}`,
    );
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await service.stop();
    await worker?.stop();
    await fake.stop();
  }
}

for (const limits of LIMITS_ORDER)
  await forEachBenchStore(values.store, 'np-bench-send', (label, ...run) => runOne(`${label} limits ${limits}`, limits === 'on', ...run));
