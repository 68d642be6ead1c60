/**
 * bench/campaign: one campaign to `--devices` consenting devices across every time zone, against
 * the real binary (roles api, scheduler, delivery), the FCM fake in its own process at
 * `--latency` ms per answer. Devices get offsets −720…+840 in hour steps; those whose local time
 * is in 21:00–06:59 now are deferred to their 07:00 (the campaign's `deferred` count), the rest
 * are pushed at once. Prints the pushes/s of the immediate part (from the request to the last
 * push), the service's peak resident memory (VmHWM), and the verdict: every device that is in
 * its daytime pushed exactly once, the campaign's counts matching.
 *
 *   node --import tsx bench/campaign/run.ts [--store sqlite|redis|both] [--devices 200000] [--latency 20]
 *                                           [--node-options OPTS]
 *
 * BENCH_CPU_PROF_DIR=DIR writes the service's V8 profiles there (bench/support/profile-report.mjs);
 * `--node-options "--import $PWD/bench/support/sqlite-statement-timer.mjs"` times its statements.
 *
 * The bench's own bookkeeping (the fake's record of every push, the expected count) lives in this
 * process and the fake's, never in the service's: the RSS printed is the service's alone. While
 * waiting it asks the fake only for a count; the full record crosses once, at the end, since a
 * record of 100,000 pushes is megabytes of IPC JSON and the CPU it costs is the service's on a
 * small machine.
 */
import { peakRssMiB, processCpuMs, threadCpuMs } from '../support/proc-stats.ts';
import { parseArgs } from 'node:util';
import { generateSecretKey } from '../../src/nostr/keys.ts';
import { createApiKey } from '../../src/platform/api-keys.ts';
import { inCampaignQuietHours } from '../../src/platform/local-time.ts';
import type { StorePort } from '../../src/store/port.ts';
import { forEachBenchStore } from '../support/stores.ts';
import { startServiceProcess } from '../../test/support/service-process.ts';
import { serviceProfileNodeArgs } from '../support/cpu-profile.ts';
import { startFcmFakeProcess } from '../support/fcm-fake-client.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'both' },
    devices: { type: 'string', default: '200000' },
    latency: { type: 'string', default: '20' },
    /** NODE_OPTIONS of the service process (e.g. V8 heap flags to compare). */
    'node-options': { type: 'string', default: '' },
  },
});
const DEVICES = Number(values.devices);
const SEED_BATCH = 1000;
const DRAIN_LIMIT_MS = 900_000;
const HOUR_MS = 3_600_000;
/** How often the drain is polled (ms). */
const DRAIN_POLL_MS = 500;
/** Threads of the service listed by their CPU (the main thread, the checkpointer, V8's GC helpers…). */
const TOP_THREADS = 8;
/** Hour offsets from UTC−12 to UTC+14: every local hour is somebody's. */
const OFFSETS = Array.from({ length: 27 }, (_, i) => (i - 12) * 60);

const pubkeyOf = (i: number): string => `${i.toString(16).padStart(12, '0')}${'e'.repeat(52)}`;
const offsetOf = (i: number): number => OFFSETS[i % OFFSETS.length] as number;

async function seed(store: StorePort): Promise<void> {
  for (let i = 0; i < DEVICES; i += SEED_BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(SEED_BATCH, DEVICES - i) }, async (_, j) => {
        const n = i + j;
        await store.setPreferences(pubkeyOf(n), { kinds: [7], campaignsEnabled: true });
        await store.registerToken(pubkeyOf(n), { token: `tok-${n}`, transport: 'fcm', timezoneOffsetMinutes: offsetOf(n) });
      }),
    );
  }
}

async function runOne(label: string, storeUrl: string, open: () => Promise<StorePort>, dir: string): Promise<void> {
  const store = await open();
  const seedStart = Date.now();
  await seed(store);
  const key = (await createApiKey(store, 'default', 'send')).key;
  await store.close();
  console.error(`${label}: ${DEVICES} devices seeded in ${((Date.now() - seedStart) / 1000).toFixed(0)} s`);
  const fake = await startFcmFakeProcess(Number(values.latency), dir);
  const service = await startServiceProcess({
    nodeArgs: serviceProfileNodeArgs(),
    env: {
      NOSTR_PUSH__ROLES: 'api,scheduler,delivery',
      NOSTR_PUSH__STORE__URL: storeUrl,
      NOSTR_PUSH__DATA_DIR: dir,
      NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: generateSecretKey(),
      NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fake.credentialsPath,
      NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
      NOSTR_PUSH__FIREBASE__API_BASE_URL: fake.baseUrl,
      NOSTR_PUSH__LOG__LEVEL: 'info',
      LOG_LEVEL: 'info',
      ...(values['node-options'] ? { NODE_OPTIONS: values['node-options'] } : {}),
    },
  });
  const onSignal = () => {
    void Promise.allSettled([service.kill(), fake.stop()]).then(() => process.exit(130));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    const nowMs = Date.now();
    let expected = 0;
    for (let i = 0; i < DEVICES; i++) if (!inCampaignQuietHours(nowMs, offsetOf(i))) expected++;
    const servicePid = service.child.pid as number;
    // The main thread's id is the process id; the rest is the checkpointer, GC helpers and libuv.
    const cpuBefore = { service: processCpuMs(servicePid), main: processCpuMs(servicePid, servicePid), fake: processCpuMs(fake.pid) };
    const threadsBefore = threadCpuMs(servicePid);
    const t0 = Date.now();
    const res = await fetch(`${service.baseUrl}/v1/campaigns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        idempotencyKey: `bench-${label}`,
        title: 'bench',
        body: 'campaign',
        audience: 'all',
        data: { eventId: 'bench' },
      }),
    });
    const { id } = (await res.json()) as { id: string };
    const deadline = Date.now() + DRAIN_LIMIT_MS;
    // Every push this service makes is the campaign's, so the fake's count is its progress.
    while ((await fake.accepted()) < expected && Date.now() <= deadline) {
      await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
    }
    // Taken before the report: fetching 100,000+ pushes from the fake costs the fake, not the service.
    const cpuAfter = { service: processCpuMs(servicePid), main: processCpuMs(servicePid, servicePid), fake: processCpuMs(fake.pid) };
    const threadsAfter = threadCpuMs(servicePid);
    const received = (await fake.report()).received.filter(([eventId]) => eventId === 'bench');
    // A loop, not Math.max(...): a spread of 100,000+ arguments overflows the stack.
    const lastMs = received.reduce((latest, [, , at]) => Math.max(latest, at), -Infinity);
    const distinct = new Set(received.map(([, token]) => token)).size;
    const counts = (await (
      await fetch(`${service.baseUrl}/v1/campaigns/${id}`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as {
      consenting: number;
      deferred: number;
      sent: number;
    };
    const rss = peakRssMiB(service.child.pid as number);
    // Who is in daytime is decided when each page is expanded: a run that crosses a whole UTC hour
    // sees one zone enter 21:00 and another reach 07:00 (its deferred devices come due) mid-way.
    const crossedHour = Math.floor(t0 / HOUR_MS) !== Math.floor(Date.now() / HOUR_MS);
    const perPush = (ms: number): string => ((ms * 1000) / Math.max(1, expected)).toFixed(0);
    const ok =
      received.length === expected && distinct === expected && counts.consenting === DEVICES && counts.deferred === DEVICES - expected;
    console.log(
      `${label}: ${DEVICES} consenting devices, ${expected} in daytime pushed in ${((lastMs - t0) / 1000).toFixed(1)} s = ` +
        `${((received.length * 1000) / (lastMs - t0)).toFixed(0)} pushes/s, ${counts.deferred} deferred to 07:00 local; ` +
        `service peak RSS ${rss.toFixed(0)} MiB; verdict: ${ok ? 'every daytime device pushed exactly once, counts match' : `WRONG: ${received.length} pushes, ${distinct} distinct, ${expected} expected, counts ${JSON.stringify(counts)}`}` +
        (crossedHour ? ' (the run crossed a whole UTC hour, so the daytime set changed mid-run: run it again)' : '') +
        `\n  CPU per daytime push (the expansion of all ${DEVICES} devices included): service ${perPush(cpuAfter.service - cpuBefore.service)} µs ` +
        `(main thread ${perPush(cpuAfter.main - cpuBefore.main)}), FCM fake ${perPush(cpuAfter.fake - cpuBefore.fake)} µs` +
        `\n  service threads, µs per push: ${[...threadsAfter]
          .map(([name, ms]): [string, number] => [name, ms - (threadsBefore.get(name) ?? 0)])
          .filter(([, ms]) => ms > 0)
          .sort((a, b) => b[1] - a[1])
          .slice(0, TOP_THREADS)
          .map(([name, ms]) => `${name} ${perPush(ms)}`)
          .join(', ')}`,
    );
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await service.stop();
    await fake.stop();
  }
}

await forEachBenchStore(values.store, 'np-bench-campaign', runOne);
