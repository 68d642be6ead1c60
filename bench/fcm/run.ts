/**
 * bench/fcm: the FCM transport alone against the FCM fake in its own process: how many sends per
 * second one process pushes over HTTP/2 at a given concurrency, and what each costs this process
 * in CPU. Verdict: the fake accepted exactly the messages sent.
 *
 *   node --import tsx bench/fcm/run.ts [--messages 30000] [--concurrency 300] [--latency 20]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createFcmTransport } from '../../src/delivery/fcm/sender.ts';
import type { PushMessage } from '../../src/delivery/types.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { printProfile, profile } from '../support/cpu-profile.ts';
import { startFcmFakeProcess } from '../support/fcm-fake-client.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '30000' },
    concurrency: { type: 'string', default: '300' },
    latency: { type: 'string', default: '20' },
  },
});
const MESSAGES = Number(values.messages);
const CONCURRENCY = Number(values.concurrency);

const dir = mkdtempSync(join(tmpdir(), 'np-bench-fcm-'));
const fake = await startFcmFakeProcess(Number(values.latency), dir);
const logger = createLogger({ level: 'silent' });
const transport = createFcmTransport({
  projectId: 'fake-project',
  credentialsPath: fake.credentialsPath,
  apiBaseUrl: fake.baseUrl,
  logger,
  metrics: new Metrics(),
});
if (!transport) throw new Error('no FCM transport');
const message = (i: number): PushMessage => ({
  data: {
    type: 'like',
    eventId: `e${i}`,
    title: 'New like',
    body: 'alice liked your post',
    senderPubkey: 'a'.repeat(64),
    senderName: 'alice',
    receiverPubkey: 'b'.repeat(64),
  },
});
// Warm up: the OAuth token and the first session.
await transport.sendBatch([{ token: 'warm-up', transport: 'fcm' }], message(-1));

/** CPU time of a process so far (ms), from /proc (Linux). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * 10;
}

let next = 0;
const fakeCpuBefore = processCpuMs(fake.pid);
let failed = 0;
const cpuBefore = process.cpuUsage();
const { result: elapsedMs, top } = await profile(async () => {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < MESSAGES) {
        const i = next++;
        const outcomes = await transport.sendBatch([{ token: `t-${i}`, transport: 'fcm' }], message(i));
        if (!outcomes.get(`t-${i}`)?.ok) failed++;
      }
    }),
  );
  return performance.now() - started;
});
const cpu = process.cpuUsage(cpuBefore);
const fakeCpuMs = processCpuMs(fake.pid) - fakeCpuBefore;
const { received } = await fake.report();
await transport.close();
await fake.stop();
rmSync(dir, { recursive: true, force: true });
const accepted = received.filter(([eventId]) => eventId !== 'e-1').length;
console.log(
  `fcm: ${MESSAGES} sends at concurrency ${CONCURRENCY}: ${(MESSAGES / (elapsedMs / 1000)).toFixed(0)} sends/s; ` +
    `this process ${((cpu.user + cpu.system) / MESSAGES).toFixed(0)} µs CPU per send, the fake ${((fakeCpuMs * 1000) / MESSAGES).toFixed(0)} µs`,
);
const ok = failed === 0 && accepted === MESSAGES;
console.log(`  verdict: ${ok ? 'OK' : 'FAIL'} (${accepted} accepted by the fake, ${failed} failed)`);
if (process.env.BENCH_PROFILE) printProfile('fcm', top);
if (!ok) process.exitCode = 1;
