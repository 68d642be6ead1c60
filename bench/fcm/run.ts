/**
 * bench/fcm: one push transport alone against its fake in its own process: how many sends per
 * second one process pushes over HTTP/2 at a given concurrency, and what each costs this process
 * in CPU. `--provider fcm` (default) is the FCM transport and the FCM fake; `--provider apns` the
 * direct APNs transport and the APNs fake (which checks every ES256 provider token). Verdict: the
 * fake accepted exactly the messages sent (and, for APNs, saw one provider token). Each HTTP/2
 * client named by `--http2-client` (`delivery.http2_client`; both by default) runs in turn, each
 * with a fresh fake, and the ratio of the two is printed.
 *
 *   node --import tsx bench/fcm/run.ts [--provider fcm|apns] [--messages 30000] [--concurrency 300] [--latency 20] [--http2-client builtin|node|both]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HTTP2_CLIENT_KINDS, type Http2ClientKind } from '../../src/config/defaults.ts';
import { createFcmTransport } from '../../src/delivery/fcm/sender.ts';
import { createApnsTransport } from '../../src/delivery/apns/sender.ts';
import type { PushTransport } from '../../src/delivery/types.ts';
import type { DeviceRegistration } from '../../src/store/port.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { printProfile, profile } from '../support/cpu-profile.ts';
import { startFcmFakeProcess } from '../support/fcm-fake-client.ts';
import { startApnsFakeProcess } from '../support/apns-fake-client.ts';
import type { PushMessage } from '../../src/notification/types.ts';
import { runUnderServerNodeFlags } from '../support/server-node-flags.ts';

runUnderServerNodeFlags();
const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '30000' },
    concurrency: { type: 'string', default: '300' },
    latency: { type: 'string', default: '20' },
    provider: { type: 'string', default: 'fcm' },
    'http2-client': { type: 'string', default: 'both' },
  },
});
const CLIENTS: Http2ClientKind[] =
  values['http2-client'] === 'both' ? [...HTTP2_CLIENT_KINDS] : HTTP2_CLIENT_KINDS.filter((kind) => kind === values['http2-client']);
if (CLIENTS.length === 0) throw new Error(`--http2-client must be builtin, node or both, not ${values['http2-client']}`);
const PROVIDER = values.provider;
if (PROVIDER !== 'fcm' && PROVIDER !== 'apns') throw new Error('--provider is fcm or apns');
const MESSAGES = Number(values.messages);
const CONCURRENCY = Number(values.concurrency);

const dir = mkdtempSync(join(tmpdir(), `np-bench-${PROVIDER}-`));
const logger = createLogger({ level: 'silent' });

interface Rig {
  transport: PushTransport;
  pid: number;
  device(i: number): DeviceRegistration;
  /** Accepted sends other than the warm-up, and a provider-specific verdict line. */
  report(): Promise<{ accepted: number; extra: string; ok: boolean }>;
  stop(): Promise<void>;
}

async function fcmRig(http2Client: Http2ClientKind): Promise<Rig> {
  const fake = await startFcmFakeProcess(Number(values.latency), dir);
  const transport = createFcmTransport({
    projectId: 'fake-project',
    credentialsPath: fake.credentialsPath,
    apiBaseUrl: fake.baseUrl,
    logger,
    metrics: new Metrics(),
    http2Client,
  });
  if (!transport) throw new Error('no FCM transport');
  return {
    transport,
    pid: fake.pid,
    device: (i) => ({ token: `t-${i}`, transport: 'fcm' }),
    report: async () => {
      const { received } = await fake.report();
      return { accepted: received.filter(([eventId]) => eventId !== 'e-1').length, extra: '', ok: true };
    },
    stop: () => fake.stop(),
  };
}

async function apnsRig(http2Client: Http2ClientKind): Promise<Rig> {
  const fake = await startApnsFakeProcess(Number(values.latency), dir);
  const transport = createApnsTransport({
    keyPath: fake.keyPath,
    keyId: fake.keyId,
    teamId: fake.teamId,
    bundleId: fake.bundleId,
    apiBaseUrl: fake.baseUrl,
    sandboxApiBaseUrl: fake.baseUrl,
    sandbox: false,
    expirationSecs: 86_400,
    logger,
    metrics: new Metrics(),
    http2Client,
  });
  if (!transport) throw new Error('no APNs transport');
  return {
    transport,
    pid: fake.pid,
    // APNs device tokens are 64 hex digits; the fake refuses anything else.
    device: (i) => ({ token: (i + 1).toString(16).padStart(64, '0'), transport: 'apns' }),
    report: async () => {
      const { accepted, providerTokensSeen } = await fake.report();
      return { accepted: accepted - 1, extra: `, ${providerTokensSeen} provider token(s) seen`, ok: providerTokensSeen === 1 };
    },
    stop: () => fake.stop(),
  };
}

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

/** CPU time of a process so far (ms), from /proc (Linux). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * 10;
}

interface ClientResult {
  client: Http2ClientKind;
  sendsPerSec: number;
  cpuPerSendUs: number;
  ok: boolean;
}

async function runWith(client: Http2ClientKind): Promise<ClientResult> {
  const rig = PROVIDER === 'apns' ? await apnsRig(client) : await fcmRig(client);
  const { transport } = rig;
  // Warm up: the OAuth token (FCM) or the provider token (APNs), and the first session.
  await transport.sendBatch([rig.device(-1)], message(-1));
  let next = 0;
  const fakeCpuBefore = processCpuMs(rig.pid);
  let failed = 0;
  const cpuBefore = process.cpuUsage();
  const { result: elapsedMs, top } = await profile(async () => {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < MESSAGES) {
          const i = next++;
          const device = rig.device(i);
          const outcomes = await transport.sendBatch([device], message(i));
          if (!outcomes.get(device.token)?.ok) failed++;
        }
      }),
    );
    return performance.now() - started;
  });
  const cpu = process.cpuUsage(cpuBefore);
  const fakeCpuMs = processCpuMs(rig.pid) - fakeCpuBefore;
  const report = await rig.report();
  await transport.close();
  await rig.stop();
  const accepted = report.accepted;
  const sendsPerSec = MESSAGES / (elapsedMs / 1000);
  const cpuPerSendUs = (cpu.user + cpu.system) / MESSAGES;
  console.log(
    `${PROVIDER} (delivery.http2_client: ${client}): ${MESSAGES} sends at concurrency ${CONCURRENCY}: ${sendsPerSec.toFixed(0)} sends/s; ` +
      `this process ${cpuPerSendUs.toFixed(0)} µs CPU per send, the fake ${((fakeCpuMs * 1000) / MESSAGES).toFixed(0)} µs`,
  );
  const ok = failed === 0 && accepted === MESSAGES && report.ok;
  console.log(`  verdict: ${ok ? 'OK' : 'FAIL'} (${accepted} accepted by the fake, ${failed} failed${report.extra})`);
  if (process.env.BENCH_PROFILE) printProfile(`${PROVIDER} ${client}`, top);
  return { client, sendsPerSec, cpuPerSendUs, ok };
}

const results: ClientResult[] = [];
for (const client of CLIENTS) results.push(await runWith(client));
rmSync(dir, { recursive: true, force: true });
const builtin = results.find((r) => r.client === 'builtin');
const node = results.find((r) => r.client === 'node');
if (builtin && node) {
  console.log(
    `  node:http2 / builtin: ${(node.cpuPerSendUs / builtin.cpuPerSendUs).toFixed(2)}× the CPU per send, ` +
      `${(node.sendsPerSec / builtin.sendsPerSec).toFixed(2)}× the sends/s`,
  );
}
if (results.some((r) => !r.ok)) process.exitCode = 1;
