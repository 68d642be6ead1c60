/**
 * bench/fcm: the FCM transport alone against the FCM fake in its own process: how many sends per
 * second one process pushes over HTTP/2 at a given concurrency, and what each costs this process
 * in CPU, on each HTTP/2 client (`delivery.http2_client`) in one run. Verdict: the fake accepted
 * exactly the messages sent.
 *
 *   node --import tsx bench/fcm/run.ts [--messages 30000] [--concurrency 300] [--latency 20] [--http2-client builtin|node|both]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HTTP2_CLIENT_KINDS, type Http2ClientKind } from '../../src/config/defaults.ts';
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
    'http2-client': { type: 'string', default: 'both' },
  },
});
const CLIENTS: Http2ClientKind[] =
  values['http2-client'] === 'both' ? [...HTTP2_CLIENT_KINDS] : HTTP2_CLIENT_KINDS.filter((kind) => kind === values['http2-client']);
if (CLIENTS.length === 0) throw new Error(`--http2-client must be builtin, node or both, not ${values['http2-client']}`);
const MESSAGES = Number(values.messages);
const CONCURRENCY = Number(values.concurrency);

const dir = mkdtempSync(join(tmpdir(), 'np-bench-fcm-'));
const fake = await startFcmFakeProcess(Number(values.latency), dir);
const logger = createLogger({ level: 'silent' });
const message = (tag: string): PushMessage => ({
  data: {
    type: 'like',
    eventId: tag,
    title: 'New like',
    body: 'alice liked your post',
    senderPubkey: 'a'.repeat(64),
    senderName: 'alice',
    receiverPubkey: 'b'.repeat(64),
  },
});

/** CPU time of a process so far (ms), from /proc (Linux). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * 10;
}

interface ClientResult {
  client: Http2ClientKind;
  sendsPerSec: number;
  cpuPerSendUs: number;
  fakeCpuPerSendUs: number;
  ok: boolean;
}

async function runWith(client: Http2ClientKind): Promise<ClientResult & { top: Awaited<ReturnType<typeof profile>>['top'] }> {
  const transport = createFcmTransport({
    projectId: 'fake-project',
    credentialsPath: fake.credentialsPath,
    apiBaseUrl: fake.baseUrl,
    logger,
    metrics: new Metrics(),
    http2Client: client,
  });
  if (!transport) throw new Error('no FCM transport');
  // Warm up: the OAuth token and the first session.
  await transport.sendBatch([{ token: 'warm-up', transport: 'fcm' }], message(`${client}-warm-up`));
  let next = 0;
  let failed = 0;
  const fakeCpuBefore = processCpuMs(fake.pid);
  const cpuBefore = process.cpuUsage();
  const { result: elapsedMs, top } = await profile(async () => {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < MESSAGES) {
          const i = next++;
          const outcomes = await transport.sendBatch([{ token: `t-${i}`, transport: 'fcm' }], message(`${client}-e${i}`));
          if (!outcomes.get(`t-${i}`)?.ok) failed++;
        }
      }),
    );
    return performance.now() - started;
  });
  const cpu = process.cpuUsage(cpuBefore);
  const fakeCpuMs = processCpuMs(fake.pid) - fakeCpuBefore;
  await transport.close();
  const { received } = await fake.report();
  const accepted = received.filter(([eventId]) => eventId.startsWith(`${client}-e`)).length;
  const result = {
    client,
    sendsPerSec: MESSAGES / (elapsedMs / 1000),
    cpuPerSendUs: (cpu.user + cpu.system) / MESSAGES,
    fakeCpuPerSendUs: (fakeCpuMs * 1000) / MESSAGES,
    ok: failed === 0 && accepted === MESSAGES,
    top,
  };
  console.log(
    `fcm (delivery.http2_client: ${client}): ${MESSAGES} sends at concurrency ${CONCURRENCY}: ${result.sendsPerSec.toFixed(0)} sends/s; ` +
      `this process ${result.cpuPerSendUs.toFixed(0)} µs CPU per send, the fake ${result.fakeCpuPerSendUs.toFixed(0)} µs`,
  );
  console.log(`  verdict: ${result.ok ? 'OK' : 'FAIL'} (${accepted} accepted by the fake, ${failed} failed)`);
  if (process.env.BENCH_PROFILE) printProfile(`fcm ${client}`, top);
  return result;
}

const results: ClientResult[] = [];
for (const client of CLIENTS) results.push(await runWith(client));
await fake.stop();
rmSync(dir, { recursive: true, force: true });
const [builtin, node] = [results.find((r) => r.client === 'builtin'), results.find((r) => r.client === 'node')];
if (builtin && node) {
  console.log(
    `  node:http2 / builtin: ${(node.cpuPerSendUs / builtin.cpuPerSendUs).toFixed(2)}× the CPU per send, ` +
      `${(node.sendsPerSec / builtin.sendsPerSec).toFixed(2)}× the sends/s`,
  );
}
if (results.some((r) => !r.ok)) process.exitCode = 1;
